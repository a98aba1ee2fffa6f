/* Who is on the other end of a loopback TCP connection. */
#ifndef PT_PEER_UID_H
#define PT_PEER_UID_H
#include <stdbool.h>
#include <sys/socket.h>

/* The uid owning the client socket PEER connected to LOCAL (both on this
 * machine), asked of the kernel (NETLINK_SOCK_DIAG, one exact lookup).
 * false when it cannot be told. */
bool peer_uid(const struct sockaddr *peer, const struct sockaddr *local, unsigned *uid);

#endif

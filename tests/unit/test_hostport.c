/* --listen's addresses and the Host headers it accepts without a token:
 * loopback only (docs/security.md, the endpoint). */
#include <string.h>

#include "check.h"
#include "hostport.h"
#include "listen_token.h"

static void address(const char *s, int parses, bool loopback)
{
    struct sockaddr_storage sa;
    socklen_t len;
    int rc = hostport_parse(s, &sa, &len);
    CHECK(rc == parses, "'%s' %s", s, parses ? "is refused" : "parses");
    if (!rc)
        CHECK(hostport_loopback((const struct sockaddr *)&sa) == loopback, "'%s' is %sa loopback address", s,
              loopback ? "" : "not ");
}

static void host(const char *h, bool loopback)
{
    CHECK(hostport_loopback_host(h) == loopback, "Host: %s is %sa loopback name", h ? h : "(none)",
          loopback ? "" : "not ");
}

int main(void)
{
    address("127.0.0.1:9465", 0, true);
    address("127.0.0.2:9465", 0, true);
    address("[::1]:9465", 0, true);
    address("[::ffff:127.0.0.1]:9465", 0, true);
    address("0.0.0.0:9465", 0, false);
    address("[::]:9465", 0, false);
    address("10.1.2.3:9465", 0, false);
    address("localhost:9465", -1, false);
    host("127.0.0.1:9465", true);
    host("127.0.0.1", true);
    host("localhost:9465", true);
    host("LOCALHOST", true);
    host("[::1]:9465", true);
    host("[::1]", true);
    /* DNS rebinding: the browser sends the attacker's name. */
    host("attacker.example:9465", false);
    host("localhost.attacker.example", false);
    host("127.0.0.1.attacker.example", false);
    host("[::1]x", false);
    host("", false);
    host(NULL, false);
    /* Bearer tokens. */
    const char *tok = "0123456789abcdefXYZ";
    CHECK(listen_token_allows(tok, "Bearer 0123456789abcdefXYZ"), "the token is allowed");
    CHECK(listen_token_allows(tok, "bearer 0123456789abcdefXYZ"), "the scheme in any case");
    CHECK(!listen_token_allows(tok, "Bearer 0123456789abcdefXY"), "a prefix of it is not");
    CHECK(!listen_token_allows(tok, "Bearer 0123456789abcdefXYZ0"), "nor a longer one");
    CHECK(!listen_token_allows(tok, "Basic 0123456789abcdefXYZ"), "nor another scheme");
    CHECK(!listen_token_allows(tok, NULL), "nor no header");
    return CHECK_DONE();
}

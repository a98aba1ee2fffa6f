"""HSQLDB (Debian's libhsqldb-java, 2.6) embedded, under the suite's own
JDBC load, java/EmbeddedDbLoad.java (see h2.py: 8 threads of short
transactions on a hot set of 16 rows; the load's JVM is the process to
trace).

The database is a file database in the private directory, in MVCC mode
(hsqldb.tx=mvcc): row-level locks, so transactions wait for the rows
another one updated (HSQLDB's default, LOCKS, would lock the whole table).
A waiting session parks on its own org.hsqldb.lib.CountUpDownLatch (one
latch per session); the database's ReentrantReadWriteLock is contended
too. HSQLDB has no lock timeout: every wait completes."""
from h2 import EmbeddedDb

TX = "mvcc"      # or "locks" (table locks, HSQLDB's default), "mvlocks"


class HSQLDB(EmbeddedDb):
    name = "hsqldb"
    jar = "/usr/share/java/hsqldb.jar"

    def url(self):
        return f"jdbc:hsqldb:file:{self.path('db', 'db')};hsqldb.tx={TX}"


if __name__ == "__main__":
    from common import main
    main(HSQLDB)

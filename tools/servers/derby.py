"""Apache Derby (Debian's libderby-java, 10.14) embedded, under the suite's
own JDBC load, java/EmbeddedDbLoad.java (see h2.py: 8 threads of short
transactions on a hot set of 16 rows; the load's JVM is the process to
trace).

Row locks: a transaction that waits for one does Object.wait on its own
org.apache.derby.impl.services.locks.ActiveLock (one object per waiting
request) in ActiveLock.waitForGrant. The lock timeout is 10 s
(derby.locks.waitTimeout) and deadlocks are looked for after 1 s
(derby.locks.deadlockTimeout), set by EmbeddedDbLoad. derby.system.home is
the private directory (derby.log goes there). Commits write and sync
Derby's log: expect waits in LogToFile.flush too."""
from h2 import EmbeddedDb


class Derby(EmbeddedDb):
    name = "derby"
    jar = "/usr/share/java/derby.jar"

    def url(self):
        return f"jdbc:derby:{self.path('db', 'db')};create=true"

    def extra_jvm_flags(self):
        return [f"-Dderby.system.home={self.dir}"]


if __name__ == "__main__":
    from common import main
    main(Derby)

"""Apache ZooKeeper (Debian's zookeeper, 3.8) standalone under the suite's
own load client, java/ZkLoad.java (16 threads over 4 sessions: setData,
getData, ephemeral create and delete on shared znodes).

ZooKeeperServerMain with a zoo.cfg of our own: clientPortAddress 127.0.0.1
on a port of its own, dataDir in the private directory, the admin HTTP
server off, forceSync=no (the load measures the request pipeline, not the
disk). Started as root with java directly (ZooKeeper does not refuse root),
so this process is the one to trace. JVM flags (JFR for one) come from the
jvm_flags argument."""
import os

from common import JAVA, Server, compile_java, report_value

CP = "/usr/share/java/zookeeper.jar"
THREADS = 16
SESSIONS = 4

ZOO_CFG = """tickTime=2000
dataDir={data}
clientPort={port}
clientPortAddress=127.0.0.1
admin.enableServer=false
forceSync=no
maxClientCnxns=0
4lw.commands.whitelist=ruok,stat
"""


class ZooKeeper(Server):
    name = "zookeeper"

    def __init__(self, jvm_flags=()):
        super().__init__()
        self.jvm_flags = list(jvm_flags)

    def start(self):
        os.makedirs(self.path("data"))
        with open(self.path("zoo.cfg"), "w") as f:
            f.write(ZOO_CFG.format(data=self.path("data"), port=self.port))
        compile_java(["ZkLoad.java"], CP, self.path("classes"))
        self.spawn([JAVA, "-Xmx256m", *self.jvm_flags, "-Dzookeeper.jmx.log4j.disable=true",
                    "-cp", CP, "org.apache.zookeeper.server.ZooKeeperServerMain", self.path("zoo.cfg")])
        self.wait_port()

    def load(self, seconds):
        p = self.spawn_load([JAVA, "-Xmx128m", "-cp", f"{CP}:{self.path('classes')}", "ZkLoad",
                             f"127.0.0.1:{self.port}", str(THREADS), str(SESSIONS), str(seconds)])
        self.wait_load_started(p, 30)
        return p

    throughput_unit = "requests/s (ZkLoad)"

    def throughput(self, output):
        """ZkLoad's `ops_per_sec N`: requests completed over the time its
        threads ran (sessions connected)."""
        return report_value("zookeeper", r"^ops_per_sec ([0-9.]+)", output)


if __name__ == "__main__":
    from common import main
    main(ZooKeeper)

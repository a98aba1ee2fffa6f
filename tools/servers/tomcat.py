"""Tomcat 10 (Debian's tomcat10) serving the suite's own servlet under wrk.

A private CATALINA_BASE (conf/server.xml of our own: one HTTP connector on
127.0.0.1, no shutdown port, no AJP, no auto-deploy; Debian's conf/web.xml;
logs, temp and work directories) with CATALINA_HOME=/usr/share/tomcat10.
The servlet, java/ParkServlet.java, is compiled with javac against Debian's
servlet API jar and deployed as the exploded webapp `pt`. Every request
takes one shared ReentrantLock. Started with java directly (Bootstrap),
as root: Tomcat does not refuse it, and this process is the one to trace.
JVM flags (JFR for one) come from the jvm_flags argument."""
import os
import shutil
import time
import urllib.request

from common import JAVA, ServerError, WrkServer, compile_java

HOME = "/usr/share/tomcat10"
SERVLET_API = "/usr/share/java/tomcat10-servlet-api.jar"

SERVER_XML = """<?xml version="1.0" encoding="UTF-8"?>
<Server port="-1" shutdown="SHUTDOWN">
  <Service name="Catalina">
    <Connector port="{port}" address="127.0.0.1" protocol="HTTP/1.1" connectionTimeout="20000"
               maxThreads="64" maxKeepAliveRequests="-1"/>
    <Engine name="Catalina" defaultHost="localhost">
      <Host name="localhost" appBase="webapps" unpackWARs="false" autoDeploy="false"
            deployOnStartup="true"/>
    </Engine>
  </Service>
</Server>
"""

WEB_XML = """<?xml version="1.0" encoding="UTF-8"?>
<web-app xmlns="https://jakarta.ee/xml/ns/jakartaee" version="6.0" metadata-complete="true">
  <servlet><servlet-name>park</servlet-name><servlet-class>ParkServlet</servlet-class>
    <load-on-startup>1</load-on-startup></servlet>
  <servlet-mapping><servlet-name>park</servlet-name><url-pattern>/work</url-pattern></servlet-mapping>
</web-app>
"""


class Tomcat(WrkServer):
    name = "tomcat"
    connections = 16

    def __init__(self, jvm_flags=()):
        super().__init__()
        self.jvm_flags = list(jvm_flags)
        self.url = f"http://127.0.0.1:{self.port}/pt/work"

    def start(self):
        for d in ("conf", "logs", "temp", "work", "webapps/pt/WEB-INF/classes"):
            os.makedirs(self.path(d), exist_ok=True)
        with open(self.path("conf", "server.xml"), "w") as f:
            f.write(SERVER_XML.format(port=self.port))
        for name in ("web.xml", "logging.properties", "catalina.properties", "context.xml"):
            shutil.copy(os.path.join("/etc/tomcat10", name), self.path("conf", name))
        with open(self.path("webapps", "pt", "WEB-INF", "web.xml"), "w") as f:
            f.write(WEB_XML)
        compile_java(["ParkServlet.java"], SERVLET_API, self.path("webapps", "pt", "WEB-INF", "classes"))
        cp = f"{HOME}/bin/bootstrap.jar:{HOME}/bin/tomcat-juli.jar"
        self.spawn([JAVA, "-Xmx256m", *self.jvm_flags,
                    f"-Djava.util.logging.config.file={self.path('conf', 'logging.properties')}",
                    "-Djava.util.logging.manager=org.apache.juli.ClassLoaderLogManager",
                    f"-Dcatalina.home={HOME}", f"-Dcatalina.base={self.dir}",
                    f"-Djava.io.tmpdir={self.path('temp')}", "-cp", cp,
                    "org.apache.catalina.startup.Bootstrap", "start"])
        self.wait_port()
        deadline = time.time() + self.start_timeout
        while True:       # the connector accepts before the webapp is deployed
            try:
                with urllib.request.urlopen(self.url, timeout=5) as r:
                    if r.status == 200:
                        break
            except OSError as e:
                err = e
            if self.proc.poll() is not None or time.time() > deadline:
                raise ServerError(f"tomcat: {self.url} not served ({err}): {self.log_tail()}")
            time.sleep(0.2)


if __name__ == "__main__":
    from common import main
    main(Tomcat)

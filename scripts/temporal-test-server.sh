#!/usr/bin/env bash
# Temporal's time-skipping test server (the Java io.temporal:temporal-test-server from Maven Central),
# for tests that need hours of workflow time in seconds (test/integration/time-skipping.test.ts).
#   scripts/temporal-test-server.sh ensure   fetch the pinned jar and its dependencies once into
#                                            .tools/temporal-test-server and print the wrapper's path
# The wrapper runs the server with the installed JDK; @temporalio/testing starts it as an
# existing executable (`<wrapper> <port> ...`), since its own download of a native build is not
# available here.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
version="1.38.0"
home="$root/.tools/temporal-test-server"
wrapper="$home/bin/temporal-test-server"

if [ "${1:-}" != "ensure" ]; then echo "usage: $0 ensure" >&2; exit 2; fi

install_hint="install a JDK (17 or later) and Maven, e.g. 'apt-get install -y openjdk-17-jre-headless maven' or 'brew install openjdk maven'"
command -v java >/dev/null 2>&1 || { echo "temporal-test-server: no 'java' on PATH; $install_hint" >&2; exit 1; }

if [ ! -x "$wrapper" ] || [ "$(cat "$home/VERSION" 2>/dev/null)" != "$version" ]; then
  command -v mvn >/dev/null 2>&1 || { echo "temporal-test-server: no 'mvn' on PATH to fetch io.temporal:temporal-test-server:$version; $install_hint" >&2; exit 1; }
  echo "temporal-test-server: fetching io.temporal:temporal-test-server:$version from Maven Central into .tools/ (once)..." >&2
  rm -rf "$home"
  mkdir -p "$home/bin"
  cat >"$home/pom.xml" <<POM
<project xmlns="http://maven.apache.org/POM/4.0.0">
  <modelVersion>4.0.0</modelVersion>
  <groupId>switchyard.tools</groupId>
  <artifactId>temporal-test-server-fetch</artifactId>
  <version>1</version>
  <packaging>pom</packaging>
  <dependencies>
    <dependency>
      <groupId>io.temporal</groupId>
      <artifactId>temporal-test-server</artifactId>
      <version>$version</version>
    </dependency>
  </dependencies>
</project>
POM
  mvn -q -B -f "$home/pom.xml" dependency:copy-dependencies -DincludeScope=runtime -DoutputDirectory="$home/lib" >&2
  # @temporalio/testing gives the server 5 s to answer (hard-coded in sdk-core); a cold JVM on a busy
  # 2-core machine took 4-6 s, so start it once now and keep its loaded classes as a CDS archive:
  # later starts take 1-2 s.
  port="$(node -e 'const s=require("net").createServer().listen(0,"127.0.0.1",()=>{console.log(s.address().port);s.close()})')"
  java -XX:ArchiveClassesAtExit="$home/classes.jsa" -cp "$home/lib/*" io.temporal.testserver.TestServer "$port" >"$home/cds.log" 2>&1 &
  server=$!
  for _ in $(seq 1 600); do (echo >"/dev/tcp/127.0.0.1/$port") 2>/dev/null && break; sleep 0.1; done
  kill "$server"; wait "$server" || true
  [ -s "$home/classes.jsa" ] || echo "temporal-test-server: no class archive written (see $home/cds.log); starts will be slower" >&2
  cat >"$wrapper" <<'WRAPPER'
#!/usr/bin/env bash
# Started by @temporalio/testing as `temporal-test-server <port> [args]`. The CDS archive and the
# client compiler only make the JVM start faster (see scripts/temporal-test-server.sh).
here="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
exec java -XX:SharedArchiveFile="$here/classes.jsa" -Xshare:auto -XX:TieredStopAtLevel=1 -XX:+UseSerialGC \
  -cp "$here/lib/*" io.temporal.testserver.TestServer "$@"
WRAPPER
  chmod +x "$wrapper"
  echo "$version" >"$home/VERSION"
fi
echo "$wrapper"

#!/usr/bin/env bash
# Run a real Neo4j Community 5.26 LTS server for tests, built from Maven Central
# jars (no Docker, no tarball): .ci/neo4j/pom.xml + .ci/neo4j/Launcher.java.
#
#   bash .ci/neo4j.sh fetch    # resolve jars into the cache (no-op when cached)
#   bash .ci/neo4j.sh start    # fetch if needed, start, wait for Bolt (no-op if up)
#   bash .ci/neo4j.sh stop     # stop the server started by `start` (no-op if down)
#   bash .ci/neo4j.sh status   # exit 0 if running and Bolt answers, else 3
#
# Bolt on bolt://127.0.0.1:$NEO4J_PORT, auth disabled, default database "neo4j".
#
# Environment (all optional):
#   NEO4J_PORT           Bolt port                               (7687)
#   NEO4J_HOME_DIR       pid file, log, database files           (/tmp/conceptmem-neo4j)
#   NEO4J_CACHE_DIR      jar cache root                          ($HOME/.cache/conceptmem/neo4j-5.26)
#   NEO4J_HEAP           JVM max heap                            (1g)
#   NEO4J_PAGECACHE      Neo4j page cache                        (256m)
#   NEO4J_START_TIMEOUT  seconds to wait for startup             (120)
#   NEO4J_KEEP_DATA=1    keep the database of a previous run (default: start empty)
set -euo pipefail

SCRIPT_DIR="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
SRC_DIR="$SCRIPT_DIR/neo4j"
POM="$SRC_DIR/pom.xml"
LAUNCHER_SRC="$SRC_DIR/Launcher.java"

PORT="${NEO4J_PORT:-7687}"
HOME_DIR="${NEO4J_HOME_DIR:-/tmp/conceptmem-neo4j}"
CACHE_DIR="${NEO4J_CACHE_DIR:-${HOME:-/root}/.cache/conceptmem/neo4j-5.26}"
LIB_DIR="$CACHE_DIR/lib"
HEAP="${NEO4J_HEAP:-1g}"
PAGECACHE="${NEO4J_PAGECACHE:-256m}"
START_TIMEOUT="${NEO4J_START_TIMEOUT:-120}"

PID_FILE="$HOME_DIR/neo4j.pid"
LOG_FILE="$HOME_DIR/neo4j.log"
DB_HOME="$HOME_DIR/db"

# Same flags the neo4j 5 server start script adds (native file access, page cache
# reflection); without them Java 17 works but logs warnings and uses fallbacks.
# Fixed heap and the throughput collector: bulk writes allocate fast, and on 2 cores G1 spent
# ~5 s of a 15 s Jocker-scale load in young pauses (ParallelGC ~3 s; measured, issue #4).
JVM_OPTS=(
  "-Xms$HEAP" "-Xmx$HEAP"
  "-XX:+UseParallelGC" "-XX:-OmitStackTraceInFastThrow" "-XX:+ExitOnOutOfMemoryError"
  "--add-opens=java.base/java.nio=ALL-UNNAMED"
  "--add-opens=java.base/java.io=ALL-UNNAMED"
  "--add-opens=java.base/sun.nio.ch=ALL-UNNAMED"
  "-Dio.netty.tryReflectionSetAccessible=true"
  "-Dlog4j2.disable.jmx=true"
  "-Djdk.nio.maxCachedBufferSize=1024"
)

log() { echo "neo4j.sh: $*" >&2; }

# Hash of the inputs that define the jar set / the compiled launcher.
stamp_of() { cat "$@" | sha256sum | cut -c1-16; }

port_open() {
  # bash's /dev/tcp; a subshell so the fd never leaks.
  (exec 3<>"/dev/tcp/127.0.0.1/$PORT") 2>/dev/null
}

# Prints the PID from the pid file if that process is alive and is our Launcher.
running_pid() {
  [[ -f "$PID_FILE" ]] || return 1
  local pid
  pid="$(cat "$PID_FILE" 2>/dev/null || true)"
  [[ "$pid" =~ ^[0-9]+$ ]] || return 1
  kill -0 "$pid" 2>/dev/null || return 1
  tr '\0' ' ' <"/proc/$pid/cmdline" 2>/dev/null | grep -q 'Launcher' || return 1
  echo "$pid"
}

cmd_fetch() {
  local want
  want="$(stamp_of "$POM")"
  if [[ -f "$LIB_DIR/.stamp" && "$(cat "$LIB_DIR/.stamp")" == "$want" ]]; then
    log "jars already in $LIB_DIR"
    return 0
  fi
  command -v mvn >/dev/null || { log "mvn not found"; return 1; }
  mkdir -p "$CACHE_DIR"
  local tmp="$CACHE_DIR/lib.tmp.$$"
  rm -rf "$tmp"
  log "fetching Neo4j jars into $LIB_DIR ..."
  local t0=$SECONDS
  # Maven 3.8's -q still prints colour resets; keep its output and show it only on failure.
  if ! mvn -q -B -f "$POM" dependency:copy-dependencies -DoutputDirectory="$tmp" \
    >"$CACHE_DIR/mvn.log" 2>&1; then
    tail -n 40 "$CACHE_DIR/mvn.log" >&2 || true
    rm -rf "$tmp"
    log "mvn dependency:copy-dependencies failed (full output: $CACHE_DIR/mvn.log)"
    return 1
  fi
  echo "$want" >"$tmp/.stamp"
  rm -rf "$LIB_DIR"
  mv "$tmp" "$LIB_DIR"
  log "fetched $(find "$LIB_DIR" -name '*.jar' | wc -l) jars ($(du -sh "$LIB_DIR" | cut -f1)) in $((SECONDS - t0))s"
}

# Compiles Launcher.java once per (launcher source, jar set); prints the class dir.
compile_launcher() {
  local classes
  classes="$CACHE_DIR/launcher-$(stamp_of "$LAUNCHER_SRC" "$POM")"
  if [[ ! -f "$classes/Launcher.class" ]]; then
    rm -rf "$classes.tmp"
    mkdir -p "$classes.tmp"
    javac -nowarn -d "$classes.tmp" -cp "$LIB_DIR/*" "$LAUNCHER_SRC" >&2
    rm -rf "$classes"
    mv "$classes.tmp" "$classes"
  fi
  echo "$classes"
}

cmd_start() {
  mkdir -p "$HOME_DIR"
  # Serialise concurrent start/stop calls on the same home dir.
  exec 9>"$HOME_DIR/.lock"
  flock 9

  local pid
  if pid="$(running_pid)"; then
    if port_open; then
      log "already running (pid $pid) on bolt://127.0.0.1:$PORT"
      return 0
    fi
    log "pid $pid is running but port $PORT is closed; restarting it"
    stop_locked
  fi
  rm -f "$PID_FILE"
  if port_open; then
    log "port $PORT is already in use by another process; set NEO4J_PORT"
    return 1
  fi

  cmd_fetch
  local classes
  classes="$(compile_launcher)"

  if [[ "${NEO4J_KEEP_DATA:-0}" != 1 ]]; then
    rm -rf "$DB_HOME"
  fi
  mkdir -p "$DB_HOME"
  : >"$LOG_FILE"

  local t0=$SECONDS
  # nohup execs java, so $! is the JVM's pid. Close fd 9 so the JVM does not hold the lock.
  nohup java "${JVM_OPTS[@]}" -cp "$classes:$LIB_DIR/*" Launcher "$DB_HOME" "$PORT" "$PAGECACHE" \
    >>"$LOG_FILE" 2>&1 </dev/null 9>&- &
  pid=$!
  echo "$pid" >"$PID_FILE"
  log "started pid $pid, waiting up to ${START_TIMEOUT}s for bolt://127.0.0.1:$PORT"

  while :; do
    if ! kill -0 "$pid" 2>/dev/null; then
      log "Neo4j exited during startup; last log lines ($LOG_FILE):"
      tail -n 60 "$LOG_FILE" >&2 || true
      rm -f "$PID_FILE"
      return 1
    fi
    if grep -q '^READY ' "$LOG_FILE" && port_open; then
      log "ready on bolt://127.0.0.1:$PORT after $((SECONDS - t0))s (pid $pid, log $LOG_FILE)"
      return 0
    fi
    if ((SECONDS - t0 >= START_TIMEOUT)); then
      log "Neo4j not ready after ${START_TIMEOUT}s; last log lines ($LOG_FILE):"
      tail -n 60 "$LOG_FILE" >&2 || true
      stop_locked || true
      return 1
    fi
    sleep 0.5
  done
}

# Stop; caller holds the lock.
stop_locked() {
  local pid
  if ! pid="$(running_pid)"; then
    rm -f "$PID_FILE"
    log "not running"
    return 0
  fi
  log "stopping pid $pid"
  kill -TERM "$pid" 2>/dev/null || true
  local i
  for ((i = 0; i < 120; i++)); do # clean shutdown usually takes a few seconds
    kill -0 "$pid" 2>/dev/null || break
    sleep 0.5
  done
  if kill -0 "$pid" 2>/dev/null; then
    log "pid $pid did not stop in 60s; sending SIGKILL"
    kill -KILL "$pid" 2>/dev/null || true
    while kill -0 "$pid" 2>/dev/null; do sleep 0.2; done
  fi
  rm -f "$PID_FILE"
  log "stopped"
}

cmd_stop() {
  if [[ ! -d "$HOME_DIR" ]]; then
    log "not running"
    return 0
  fi
  exec 9>"$HOME_DIR/.lock"
  flock 9
  stop_locked
}

cmd_status() {
  local pid
  if pid="$(running_pid)"; then
    if port_open; then
      echo "running (pid $pid) bolt://127.0.0.1:$PORT"
      return 0
    fi
    echo "starting or unhealthy (pid $pid); bolt port $PORT closed"
    return 3
  fi
  echo "not running"
  return 3
}

case "${1:-}" in
  fetch) cmd_fetch ;;
  start) cmd_start ;;
  stop) cmd_stop ;;
  status) cmd_status ;;
  *)
    echo "usage: $0 {fetch|start|stop|status}" >&2
    exit 2
    ;;
esac

# board_lib.sh - helpers for the board's integration tests (sourced after lib.sh): real
# receipts from 'pacer bench' against the scripted fault server, the fixture hub, a board,
# uploads, and a private PostgreSQL cluster.
#
# PostgreSQL: the cluster is made with initdb in a fresh temporary directory, listens only on
# 127.0.0.1 (a free port) and a socket in that directory, trusts its one user "pacer", and
# is stopped and removed when the script exits. PostgreSQL refuses to run as root, so when
# the tests run as root (CI containers) initdb and pg_ctl run as the "postgres" user that
# Debian's postgresql package creates, through runuser (util-linux); the directory is
# handed to that user first.
HUB_COMMIT=0123abcd
FAULT=tests/data/fault

# make_receipt NAME [BENCH ARGS...]: a real receipt of org/m (accepted manifest, cuda,
# community-v2 unless the args say otherwise) at $TMP/NAME.json
make_receipt() {
  n=$1; shift
  "$TOOLS/fault_server" --port-file "$TMP/fs-$n.port" --pace-us 0 --script $FAULT/manifest-ok.script \
    --script $FAULT/normal-256.script >/dev/null 2>&1 &
  fs=$!; track $fs
  wait_file "$TMP/fs-$n.port" 10 || return 1
  "$PACER" bench org/m --server "http://127.0.0.1:$(cat "$TMP/fs-$n.port")" --model-id m --output "$TMP/$n.json" "$@" \
    >/dev/null 2>&1
  rc=$?
  kill $fs 2>/dev/null; wait $fs 2>/dev/null
  return $rc
}

# mutate IN OUT PYTHON [OUT PYTHON]...: each OUT is IN after the Python statements (the
# receipt is `r`); one interpreter for them all
mutate() {
  src=$1; shift
  python3 - "$src" "$@" <<'EOT'
import copy, json, sys
base = json.load(open(sys.argv[1]))
for out, code in zip(sys.argv[2::2], sys.argv[3::2]):
    r = copy.deepcopy(base)
    exec(code)
    json.dump(r, open(out, "w"))
EOT
}

# start_hub [ARGS...]: the fixture hub with repos org/m, org/m2, org/m3, org/secret (private)
# and org/moe (a mixture of experts); sets $HUB and $HUB_LOG
start_hub() {
  for r in m m2 m3 secret; do
    mkdir -p "$TMP/hub/org/$r"
    cat > "$TMP/hub/org/$r/config.json" <<'EOT'
{"architectures":["LlamaForCausalLM"],"hidden_size":2048,"intermediate_size":8192,"num_attention_heads":32,
 "num_hidden_layers":16,"num_key_value_heads":8,"vocab_size":128256,"tie_word_embeddings":true}
EOT
  done
  mkdir -p "$TMP/hub/org/moe"
  cat > "$TMP/hub/org/moe/config.json" <<'EOT'
{"architectures":["MixtralForCausalLM"],"hidden_size":4096,"intermediate_size":14336,"num_attention_heads":32,
 "num_hidden_layers":32,"num_key_value_heads":8,"vocab_size":32000,"num_local_experts":8,"num_experts_per_tok":2}
EOT
  HUB_LOG="$TMP/hub.log"; : > "$HUB_LOG"
  python3 tests/tools/fixture_hub.py --root "$TMP/hub" --commit $HUB_COMMIT --private org/secret \
    --port-file "$TMP/hub.port" --log "$HUB_LOG" "$@" 2>"$TMP/hub.err" &
  track $!
  wait_file "$TMP/hub.port" 10 || return 1
  HUB="http://127.0.0.1:$(cat "$TMP/hub.port")"
}

# start_board NAME STORE_ARGS... [BOARD ARGS...]: runs 'pacer board'; sets $BOARD and $BOARD_PID
start_board() {
  n=$1; shift
  rm -f "$TMP/$n.port"
  "$PACER" board --listen 127.0.0.1:0 --port-file "$TMP/$n.port" --hub "$HUB" "$@" 2>>"$TMP/$n.log" &
  BOARD_PID=$!; track $BOARD_PID
  wait_file "$TMP/$n.port" 20 || { cat "$TMP/$n.log" >&2; return 1; }
  BOARD="http://127.0.0.1:$(cat "$TMP/$n.port")"
}
# stop_board: SIGTERM; the board must exit 0 (under the sanitizer build: no leak, no error)
stop_board() {
  kill "$BOARD_PID" 2>/dev/null; wait "$BOARD_PID" 2>/dev/null
  src=$?; [ $src -eq 0 ] || fail "the board stops cleanly" "exit status $src"
}

# upload FILE TOKEN: POSTs a receipt with curl; the status in $CODE, the answer in $TMP/answer.json
upload() {
  CODE=$(curl -s -o "$TMP/answer.json" -w '%{http_code}' -H "Authorization: Bearer $2" \
    -H 'Content-Type: application/json' --data-binary @"$1" "$BOARD/api/v1/receipts")
}
# jget KEY [FILE]: the first value of KEY in compact JSON (a string's text or a number);
# FILE defaults to the last answer
jget() { grep -o "\"$1\":\(\"[^\"]*\"\|[^,}]*\)" "${2:-$TMP/answer.json}" | head -n 1 | sed 's/^"[^"]*"://; s/^"//; s/"$//'; }
# submission ID TOKEN: GET /api/v1/receipts/ID into $TMP/sub.json
submission() { curl -s -H "Authorization: Bearer $2" "$BOARD/api/v1/receipts/$1" > "$TMP/sub.json"; }

# pg_start: a private cluster; sets $PG (a conninfo for database "postgres"). Returns 1, with
# $PG_WHY, when PostgreSQL is not installed.
PG_DIR=""
pg_start() {
  PG_BIN=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -n 1)
  [ -n "$PG_BIN" ] && [ -x "$PG_BIN/initdb" ] || { PG_WHY="PostgreSQL is not installed (Debian: postgresql)"; return 1; }
  PG_DIR=$(mktemp -d)
  PG_RUN=""
  if [ "$(id -u)" -eq 0 ]; then
    id postgres >/dev/null 2>&1 || { PG_WHY="running as root and no 'postgres' user to run the cluster"; return 1; }
    chown postgres "$PG_DIR"; chmod 700 "$PG_DIR"
    PG_RUN="runuser -u postgres --"
  fi
  $PG_RUN "$PG_BIN/initdb" -D "$PG_DIR/data" -A trust -U pacer -E UTF8 --no-sync >"$TMP/initdb.log" 2>&1 ||
    { PG_WHY="initdb failed: $(tail -n 3 "$TMP/initdb.log")"; return 1; }
  PG_PORT=$(free_port)
  $PG_RUN "$PG_BIN/pg_ctl" -D "$PG_DIR/data" -l "$PG_DIR/server.log" -w -t 60 \
    -o "-c listen_addresses=127.0.0.1 -p $PG_PORT -c unix_socket_directories=$PG_DIR" start >/dev/null 2>&1 ||
    { PG_WHY="the cluster did not start: $(tail -n 3 "$PG_DIR/server.log" 2>/dev/null)"; return 1; }
  PG="host=127.0.0.1 port=$PG_PORT user=pacer dbname=postgres"
}
# pg_db NAME: a fresh database in the cluster; prints its conninfo
pg_db() {
  psql -q "$PG" -c "CREATE DATABASE $1" >/dev/null 2>&1 && echo "host=127.0.0.1 port=$PG_PORT user=pacer dbname=$1"
}
pg_stop() {
  [ -n "$PG_DIR" ] || return 0
  $PG_RUN "$PG_BIN/pg_ctl" -D "$PG_DIR/data" -m immediate stop >/dev/null 2>&1
  rm -rf "$PG_DIR"; PG_DIR=""
}
trap 'pg_stop; cleanup' EXIT INT TERM

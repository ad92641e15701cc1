#!/bin/sh
# board_durability.sh - kill -9 of the board in a loop during uploads, on SQLite and on the
# private PostgreSQL cluster: every acknowledged upload (at least 200) is present afterwards
# with its state, every stored row is whole (its canonical hash recomputed), and the SQLite
# file passes integrity_check.
. tests/lib.sh
. tests/board_lib.sh

make_receipt ok || fail "a real receipt"
start_hub || fail "fixture hub starts"
TOK=$("$PACER" board token create durable --db "$TMP/board.db" 2>/dev/null)
python3 tests/tools/board_durability.py --pacer "$PACER" --db "$TMP/board.db" --hub "$HUB" --token "$TOK" \
  --receipt "$TMP/ok.json" --work "$TMP" > "$TMP/dur.out" 2>&1
rc=$?
cat "$TMP/dur.out"
check "[sqlite] kill -9 during uploads: every acknowledged upload stored whole" [ $rc -eq 0 ]
if pg_start; then
  DB=$(pg_db durability)
  TOK=$("$PACER" board token create durable --pg "$DB" 2>/dev/null)
  python3 tests/tools/board_durability.py --pacer "$PACER" --pg "$DB" --hub "$HUB" --token "$TOK" \
    --receipt "$TMP/ok.json" --work "$TMP" > "$TMP/dur-pg.out" 2>&1
  rc=$?
  cat "$TMP/dur-pg.out"
  check "[pg] kill -9 during uploads: every acknowledged upload stored whole" [ $rc -eq 0 ]
elif [ "${CI:-}" = true ]; then
  fail "[pg] durability" "$PG_WHY"
else
  skip "[pg] durability" "$PG_WHY"
fi
finish

#!/bin/sh
# board_durability.sh - kill -9 of the board (SQLite store) in a loop during uploads: every
# acknowledged upload (at least 200) is present afterwards with its state, every stored row
# is whole (its canonical hash recomputed), and the file passes integrity_check.
. tests/lib.sh
. tests/board_lib.sh

make_receipt ok || fail "a real receipt"
start_hub || fail "fixture hub starts"
TOK=$("$PACER" board token create durable --db "$TMP/board.db" 2>/dev/null)
python3 tests/tools/board_durability.py --pacer "$PACER" --db "$TMP/board.db" --hub "$HUB" --token "$TOK" \
  --receipt "$TMP/ok.json" --work "$TMP" > "$TMP/dur.out" 2>&1
rc=$?
cat "$TMP/dur.out"
check "kill -9 during uploads: every acknowledged upload stored whole" [ $rc -eq 0 ]
finish

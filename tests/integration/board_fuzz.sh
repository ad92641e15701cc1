#!/bin/sh
# board_fuzz.sh - 10,000 mutated uploads (truncated, deep nesting, huge numbers, invalid
# UTF-8, duplicated keys, wrong types) all answered with a 4xx, and the board still serving
# afterwards: a valid upload is taken. Under 'make sanitize' the board runs the ASan+UBSan build.
. tests/lib.sh
. tests/board_lib.sh

make_receipt ok || fail "a real receipt"
start_hub || fail "fixture hub starts"
TOK=$("$PACER" board token create fuzz --db "$TMP/board.db" 2>/dev/null)
start_board b --db "$TMP/board.db" --quota 100000 || fail "board starts"
python3 tests/tools/board_fuzz.py --url "$BOARD" --token "$TOK" --receipt "$TMP/ok.json" --count 10000 > "$TMP/fuzz.out" 2>&1
rc=$?
cat "$TMP/fuzz.out"
check "10,000 mutated uploads: every answer a 4xx" [ $rc -eq 0 ]
check "the board process is still running" kill -0 "$BOARD_PID"
check "the board still answers" [ "$(curl -s -o /dev/null -w '%{http_code}' "$BOARD/api/v1/capabilities")" = 200 ]
upload "$TMP/ok.json" "$TOK"
check "the board still takes a valid receipt" [ "$CODE $(jget state)" = "201 public" ]
curl -s "$BOARD/metrics" > "$TMP/metrics.txt"
check "rejections counted by reason" sh -c "grep -q 'pacer_board_validation_failures_total{reason=\"json\"}' '$TMP/metrics.txt' &&
  grep -q 'pacer_board_validation_failures_total{reason=\"limits\"}' '$TMP/metrics.txt'"
stop_board
finish

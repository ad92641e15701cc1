#!/bin/sh
# board.sh - 'pacer board' end to end, the same cases on SQLite and on a real PostgreSQL
# (a private cluster, tests/board_lib.sh): a complete standard receipt published; forged
# aggregate, tampered digest, v1 relabelled v2 and a changed seed rejected with the reason;
# a retry answered with the same submission and the quota unchanged; the 21st upload of a
# day refused; hub down -> pending-checkpoint, hub back -> public with no new upload; a
# private checkpoint never public; ROCm refused by client and receiver unless enabled;
# withdrawal by the contributor, review and approval by the admin. The store's unit tests
# (test_board_store) run here once more against the PostgreSQL cluster.
. tests/lib.sh
. tests/board_lib.sh

make_receipt ok || fail "a real community-v2 receipt"
make_receipt v1 --suite community-v1 || fail "a real community-v1 receipt"
V2=34a6896eb576cd8e70a10676bc0a0f3b716a03740c23ae1bfc26868210bc79c0
mutate "$TMP/v1.json" "$TMP/v1as2.json" "r['suite'].update(id='community-v2', version=2, digest='$V2')"
set -- "$TMP/forged.json" "r['cells'][3]['aggregates']['stream_tok_s']['median'] *= 1.5" \
  "$TMP/tampered.json" "r['suite']['digest'] = '0' * 64" \
  "$TMP/seed.json" "r['cells'][0]['attempts'][3]['seed'] = 7" \
  "$TMP/m2.json" "r['model']['id'] = 'org/m2'" \
  "$TMP/secret.json" "r['model']['id'] = 'org/secret'" \
  "$TMP/moe.json" "r['model']['id'] = 'org/moe'" \
  "$TMP/rocm.json" "r['backend']['name'] = 'rocm'" \
  "$TMP/short.json" "r['cells'][2]['attempts'][2].update(status='incomplete', reason='stream cut'); r['cells'][2].update(status='incomplete', aggregates=None); r.update(exit_status=2, ranked=False)"
for i in $(seq 1 21); do set -- "$@" "$TMP/q$i.json" "r['run_id'] = 'quota-$i'"; done
mutate "$TMP/ok.json" "$@"
start_hub --down-file "$TMP/hub.down" || fail "fixture hub starts"

# run_cases KIND STORE_OPTION STORE_TARGET
run_cases() {
  K=$1; SO=$2; ST=$3
  TOK=$("$PACER" board token create alice $SO "$ST" 2>/dev/null)
  TOK2=$("$PACER" board token create bob $SO "$ST" 2>/dev/null)
  check "[$K] token create prints a token" sh -c "echo '$TOK' | grep -q '^pbt_[0-9a-f]\{48\}$'"
  start_board "b-$K" $SO "$ST" --hub-retry 1 || { fail "[$K] board starts"; return; }

  out=$(PACER_BENCHMARK_TOKEN=$TOK "$PACER" bench publish "$TMP/ok.json" --yes --upload-url "$BOARD" 2>&1)
  check "[$K] complete standard receipt published, with its result URL" sh -c "echo '$out' | grep -q '^published: $BOARD/r/s-[0-9a-f]*$'"
  ID=$(echo "$out" | sed -n 's|^published: .*/r/||p')
  submission "$ID" ""
  check "[$K] it is public, with the checkpoint's parameter count" \
    [ "$(jget state "$TMP/sub.json") $(jget params_total "$TMP/sub.json") $(jget params_active "$TMP/sub.json")" = "public 1235814400 1235814400" ]

  upload "$TMP/forged.json" "$TOK"
  check "[$K] forged aggregate rejected with the reason" sh -c "[ $CODE = 422 ] && grep -q 'aggregate check failed' '$TMP/answer.json'"
  upload "$TMP/tampered.json" "$TOK"
  check "[$K] tampered digest rejected with the reason" sh -c "[ $CODE = 422 ] && grep -q 'digest check failed' '$TMP/answer.json'"
  upload "$TMP/v1as2.json" "$TOK"
  check "[$K] v1 relabelled v2 rejected with the reason" sh -c "[ $CODE = 422 ] && grep -q 'suite check failed' '$TMP/answer.json'"
  upload "$TMP/seed.json" "$TOK"
  check "[$K] changed seed rejected with the reason" sh -c "[ $CODE = 422 ] && grep -q 'seed check failed' '$TMP/answer.json'"
  upload "$TMP/v1.json" "$TOK"
  check "[$K] a v1 receipt is taken as v1" [ "$CODE $(jget state) $(jget suite)" = "201 public community-v1" ]

  upload "$TMP/ok.json" "$TOK"
  check "[$K] a retry returns the same submission, quota unchanged" \
    [ "$CODE $(jget id) $(jget duplicate) $(jget uploads_today)" = "200 $ID true 2" ]
  upload "$TMP/ok.json" "$TOK2"
  check "[$K] the same receipt from another contributor is refused" [ "$CODE" = 409 ]
  upload "$TMP/ok.json" "not-a-token"
  check "[$K] an unknown token is refused" [ "$CODE" = 401 ]

  i=1; codes=""
  while [ $i -le 21 ]; do upload "$TMP/q$i.json" "$TOK2"; codes="$codes$CODE "; i=$((i + 1)); done
  check "[$K] 20 uploads of a day taken, the 21st refused" \
    [ "$codes" = "$(printf '201 %.0s' $(seq 1 20))429 " ]
  upload "$TMP/q5.json" "$TOK2"
  check "[$K] after the quota a retry is still answered" [ "$CODE" = 200 ]

  touch "$TMP/hub.down"
  upload "$TMP/m2.json" "$TOK"
  PID_ID=$(jget id)
  check "[$K] hub down: saved as pending-checkpoint" [ "$CODE $(jget state)" = "201 pending-checkpoint" ]
  check "[$K] pending is private" [ "$(curl -s -o /dev/null -w '%{http_code}' "$BOARD/api/v1/receipts/$PID_ID")" = 404 ]
  sleep 1.5
  submission "$PID_ID" "$TOK"
  check "[$K] still pending while the hub is down" [ "$(jget state "$TMP/sub.json")" = pending-checkpoint ]
  rm -f "$TMP/hub.down"
  n=0; while [ $n -lt 60 ] && submission "$PID_ID" "$TOK" && [ "$(jget state "$TMP/sub.json")" != public ]; do sleep 0.25; n=$((n + 1)); done
  submission "$PID_ID" ""
  check "[$K] hub back: public without a new upload" [ "$(jget state "$TMP/sub.json") $(jget params_total "$TMP/sub.json")" = "public 1235814400" ]
  check "[$K] lookup retries counted" sh -c "curl -s '$BOARD/metrics' | grep -q 'pacer_board_checkpoint_lookup_retries_total [1-9]'"

  upload "$TMP/secret.json" "$TOK"
  SID=$(jget id)
  check "[$K] private checkpoint: pending-review, saying why" \
    sh -c "[ '$CODE $(jget state)' = '201 pending-review' ] && grep -q 'does not show org/secret' '$TMP/answer.json'"
  sleep 1.2
  submission "$SID" "$TOK"
  check "[$K] ... and never public on its own" [ "$(jget state "$TMP/sub.json")" = pending-review ]
  upload "$TMP/short.json" "$TOK"
  check "[$K] a valid incomplete run waits for review" \
    sh -c "[ '$CODE $(jget state)' = '201 pending-review' ] && grep -q 'cell chat/sampled is incomplete' '$TMP/answer.json'"
  upload "$TMP/moe.json" "$TOK"
  check "[$K] mixture of experts: total and active parameters from its config" \
    [ "$(jget params_total) $(jget params_active)" = "46702792704 12879925248" ]

  "$PACER" board review $SO "$ST" > "$TMP/review.txt"
  check "[$K] review lists the private one" grep -q "$SID .*pending-review" "$TMP/review.txt"
  "$PACER" board approve "$SID" $SO "$ST" > /dev/null
  submission "$SID" ""
  check "[$K] approved by a person: public" [ "$(jget state "$TMP/sub.json")" = public ]
  check "[$K] another contributor cannot withdraw it" \
    [ "$(curl -s -o /dev/null -w '%{http_code}' -X POST -H "Authorization: Bearer $TOK2" "$BOARD/api/v1/receipts/$SID/withdraw")" = 404 ]
  check "[$K] its contributor withdraws it" \
    [ "$(curl -s -o /dev/null -w '%{http_code}' -X POST -H "Authorization: Bearer $TOK" "$BOARD/api/v1/receipts/$SID/withdraw")" = 200 ]
  check "[$K] withdrawn: gone from public view" [ "$(curl -s -o /dev/null -w '%{http_code}' "$BOARD/api/v1/receipts/$SID")" = 404 ]
  "$PACER" board approve "$SID" $SO "$ST" > /dev/null 2>&1
  check "[$K] a withdrawn submission is never republished" [ $? -ne 0 ]

  "$PACER" bench publish "$TMP/rocm.json" --yes --upload-url "$BOARD" > "$TMP/rocm.out" 2>&1
  check "[$K] client refuses ROCm when the board does not list it" sh -c "[ $? -ne 0 ] && grep -q 'does not take rocm' '$TMP/rocm.out'"
  upload "$TMP/rocm.json" "$TOK"
  check "[$K] receiver refuses ROCm unless enabled" sh -c "[ $CODE = 422 ] && grep -q 'backend check failed' '$TMP/answer.json'"
  stop_board
  start_board "r-$K" $SO "$ST" --accept-backends cuda,rocm,cpu || { fail "[$K] board with ROCm starts"; return; }
  PACER_BENCHMARK_TOKEN=$TOK "$PACER" bench publish "$TMP/rocm.json" --yes --upload-url "$BOARD" > "$TMP/rocm2.out" 2>&1
  check "[$K] ROCm published where enabled" grep -q '^published: ' "$TMP/rocm2.out"
  curl -s "$BOARD/metrics" > "$TMP/metrics-$K.txt"
  check "[$K] metrics: uploads by outcome, failures by reason, latency" sh -c \
    "grep -q 'pacer_board_uploads_total{outcome=\"public\"}' '$TMP/metrics-$K.txt' &&
     grep -q 'pacer_board_request_duration_seconds_count{route=\"upload\"}' '$TMP/metrics-$K.txt'"
  stop_board
  if [ "$K" = sqlite ]; then dump() { cat "$ST"*; }; else dump() { pg_dump -d "$ST" 2>/dev/null; }; fi
  if dump | grep -aq "$TOK"; then fail "[$K] upload tokens are stored only hashed"; else
    dump | grep -aq "$(printf '%s' "$TOK" | sha256sum | cut -d' ' -f1)" && pass "[$K] upload tokens are stored only hashed" ||
      fail "[$K] upload tokens are stored only hashed" "no hash found either"; fi
}

run_cases sqlite --db "$TMP/board.db"
if pg_start; then
  DB=$(pg_db board_cases) || fail "a PostgreSQL database"
  run_cases pg --pg "$DB"
  PACER_TEST_PG="$(pg_db board_unit)" "$BUILD/tests/test_board_store" --jobs 1 > "$TMP/unit-pg.txt" 2>&1
  check "[pg] the store's unit tests pass on PostgreSQL" sh -c "[ $? -eq 0 ] && grep -q 'Failing: 0 | Crashing: 0' '$TMP/unit-pg.txt'"
  grep -v '^\[----\]' "$TMP/unit-pg.txt" | tail -n 5
elif [ "${CI:-}" = true ]; then
  fail "PostgreSQL cases" "$PG_WHY"
else
  skip "PostgreSQL cases" "$PG_WHY"
fi
finish

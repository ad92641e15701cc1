#!/bin/sh
# generate.sh - 'pacer generate' on synthesized checkpoints of every weight type prints
# text and speeds; greedy output is the same at 1 and 2 threads; seeded sampling repeats.
. tests/lib.sh

args="--dim 64 --layers 2 --heads 4 --kv-heads 2 --ffn 128"
for t in f32 f16 q8_0 q4_0; do
  $PACER model synth -o "$TMP/$t.gguf" $args --type $t --seed 5
  $PACER generate "$TMP/$t.gguf" -p "hello there" -n 12 --threads 1 >"$TMP/$t.1" 2>"$TMP/$t.err"
  check "$t: generate exits 0" [ $? -eq 0 ]
  check "$t: prints text" test -s "$TMP/$t.1"
  check "$t: prints decode speed" grep -q "^decode: [0-9]* tokens, .* tok/s" "$TMP/$t.err"
  check "$t: prints prompt speed" grep -q "^prompt: [0-9]* tokens, .* tok/s" "$TMP/$t.err"
  $PACER generate "$TMP/$t.gguf" -p "hello there" -n 12 --threads 2 >"$TMP/$t.2" 2>/dev/null
  check "$t: greedy same at 1 and 2 threads" cmp -s "$TMP/$t.1" "$TMP/$t.2"
done
m="$TMP/q8_0.gguf"
$PACER generate "$m" -p "abc" -n 20 --temp 1.2 --top-k 40 --top-p 0.95 --seed 9 >"$TMP/s1" 2>/dev/null
$PACER generate "$m" -p "abc" -n 20 --temp 1.2 --top-k 40 --top-p 0.95 --seed 9 --threads 2 >"$TMP/s2" 2>/dev/null
check "seeded sampling repeats" cmp -s "$TMP/s1" "$TMP/s2"
$PACER generate "$TMP/none.gguf" -p x >/dev/null 2>"$TMP/e"
check "missing model: exit 1" [ $? -eq 1 ]
check "missing model: one line" [ "$(wc -l <"$TMP/e")" -eq 1 ]
$PACER generate "$m" >/dev/null 2>&1
check "no prompt: usage error" [ $? -eq 1 ]
finish

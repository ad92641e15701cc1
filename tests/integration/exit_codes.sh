# exit_codes.sh - a usage error exits 1 in every command (2 means "the saved receipt holds
# incomplete attempts" to a bench run, never a usage error), and nothing is started or written.
. tests/lib.sh
export HOME="$TMP/home"; mkdir -p "$HOME"
usage_exit() { # NAME ARGS...: pacer ARGS must exit 1 and say something on stderr
  name=$1; shift
  "$PACER" "$@" >"$TMP/out" 2>"$TMP/err" </dev/null
  rc=$?
  if [ $rc -eq 1 ] && [ -s "$TMP/err" ]; then pass "$name: exit 1"; else fail "$name" "exit $rc"; cat "$TMP/err"; fi
}
usage_exit "no command" 
usage_exit "unknown command" frobnicate
usage_exit "bench: unknown option" bench --no-such-option
usage_exit "bench: bad --reps" bench --reps 0
usage_exit "bench: attached without --model-id" bench org/m --server http://127.0.0.1:1
usage_exit "bench inspect: no receipt" bench inspect
usage_exit "serve: unknown option" serve m.gguf --no-such-option
usage_exit "serve: no model" serve
usage_exit "serve: bad --port" serve m.gguf --port 70000
usage_exit "serve: two models" serve a.gguf b.gguf
usage_exit "generate: unknown option" generate m.gguf -p hi --no-such-option
usage_exit "generate: no prompt" generate m.gguf
usage_exit "generate: bad -n" generate m.gguf -p hi -n x
usage_exit "probe: unknown option" probe --no-such-option
usage_exit "probe: --read-sample without --model" probe --read-sample
usage_exit "model: unknown subcommand" model frobnicate
usage_exit "model synth: no output" model synth
usage_exit "pull: no repo" pull
usage_exit "request: no server" request
usage_exit "request: unknown option" request --server http://127.0.0.1:1 --no-such-option
usage_exit "request: fractional seed" request --server http://127.0.0.1:1 --seed 1.5
usage_exit "request: bad --tokens" request --server http://127.0.0.1:1 --tokens 2.5
usage_exit "model synth: unknown option" model synth -o m.gguf --no-such-option
usage_exit "model synth: negative seed" model synth -o m.gguf --seed -1
usage_exit "model synth: seed past 2^64" model synth -o m.gguf --seed 18446744073709551616
usage_exit "model quantize: unknown option" model quantize a.gguf b.gguf --type q8_0 --no-such-option
check "usage errors wrote no receipt" sh -c "[ ! -d '$HOME/.pacer/benchmarks' ] || [ -z \"\$(ls -A '$HOME/.pacer/benchmarks')\" ]"
finish

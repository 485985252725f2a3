#!/usr/bin/env bash
# `ksim viz`: bad input exits 2 with one line naming the thing and what is valid, and leaves no
# PNG behind; --screenshot renders a PNG headless (EGL) from a scenario run in process and from
# recorded traces (one, or several compared), with --panel, --at-ms and --size.
source "$(dirname "$0")/lib.sh" "$@"
DATA="$SRC/tests/cli/data"
SCENARIO="$DATA/run_small.json"

# no_png: no PNG (nor its temporary file) left in $WORK.
no_png() {
  local left
  left=$(cd "$WORK" && ls -A | grep -E 'png' || true)
  [ -z "$left" ] || fail "files left after a failed screenshot: $left"
}

# is_png FILE WIDTH HEIGHT: the PNG signature and the IHDR's size.
is_png() {
  [ -s "$1" ] || fail "$1 missing or empty"
  local header
  header=$(head -c 24 "$1" | od -An -tx1 | tr -d ' \n')
  [ "${header:0:16}" = "89504e470d0a1a0a" ] || fail "$1 is not a PNG: $header"
  [ "$((16#${header:32:8}))" = "$2" ] || fail "$1 width $((16#${header:32:8})), expected $2"
  [ "$((16#${header:40:8}))" = "$3" ] || fail "$1 height $((16#${header:40:8})), expected $3"
}

expect_exit 0 "$KSIM" viz --help
expect_grep '--screenshot' "$WORK/stdout"
expect_grep '--at-ms' "$WORK/stdout"

# A recorded trace (level messages, as the viewer draws the messages diagram from it).
expect_exit 0 "$KSIM" run "$SCENARIO" --variant base --trace-level messages --trace "$WORK/base.jsonl"
expect_exit 0 "$KSIM" run "$SCENARIO" --variant acks-1 --trace-level messages --trace "$WORK/acks1.jsonl"

# ---- Bad input.
expect_exit 2 "$KSIM" viz
expect_exit 2 "$KSIM" viz "$WORK/missing.json" --screenshot "$WORK/out.png"
expect_grep '^ksim viz: no such file: .*missing.json' "$WORK/stderr"
no_png
expect_exit 2 "$KSIM" viz "$WORK/missing.jsonl" --screenshot "$WORK/out.png"
expect_grep 'no such file: .*missing.jsonl' "$WORK/stderr"
no_png

head -c 300 "$WORK/base.jsonl" > "$WORK/corrupt.jsonl"
expect_exit 2 "$KSIM" viz "$WORK/corrupt.jsonl" --screenshot "$WORK/out.png"
expect_grep 'corrupt.jsonl' "$WORK/stderr"
[ "$(wc -l < "$WORK/stderr")" = 1 ] || fail "more than one error line: $(cat "$WORK/stderr")"
no_png

expect_exit 2 "$KSIM" viz "$WORK/base.jsonl" --screenshot "$WORK/out.png" --panel ledgers
expect_grep 'unknown panel "ledgers": valid panels are cluster, partitions, timeline, messages, ledger, compare, scenario$' "$WORK/stderr"
no_png
for size in 100 0x100 100x 64x9000 axb 1600x1000x2; do
  expect_exit 2 "$KSIM" viz "$WORK/base.jsonl" --screenshot "$WORK/out.png" --size "$size"
  expect_grep "^ksim viz: --size '$size' is not a size: expected WIDTHxHEIGHT in pixels, each 64 to 8192" "$WORK/stderr"
done
no_png
expect_exit 2 "$KSIM" viz "$WORK/base.jsonl" --screenshot "$WORK/out.png" --at-ms 99999999
expect_grep '^ksim viz: --at-ms 99999999 is beyond the run: valid 0 to [0-9]+ ms of scenario time$' "$WORK/stderr"
expect_exit 2 "$KSIM" viz "$WORK/base.jsonl" --screenshot "$WORK/out.png" --at-ms soon
expect_grep "--at-ms 'soon' is not a time" "$WORK/stderr"
no_png
expect_exit 2 "$KSIM" viz "$SCENARIO" --screenshot "$WORK/out.png" --variant acks2
expect_grep '^ksim viz: unknown variant "acks2" in .*run_small.json: did you mean "acks-1"\? valid variants are base, acks-1$' "$WORK/stderr"
no_png
expect_exit 2 "$KSIM" viz "$WORK/base.jsonl" --variant base --screenshot "$WORK/out.png"
expect_grep 'apply to a scenario' "$WORK/stderr"
expect_exit 2 "$KSIM" viz "$SCENARIO" "$WORK/base.jsonl" --screenshot "$WORK/out.png"
expect_grep 'not both' "$WORK/stderr"
expect_exit 2 "$KSIM" viz "$WORK/base.jsonl" --panel ledger
expect_grep '^ksim viz: --panel goes with --screenshot$' "$WORK/stderr"
expect_exit 2 "$KSIM" viz "$WORK/base.jsonl" --screenshot "$WORK/out.png" --frames 3
expect_grep '^ksim viz: --frames is for the window; --screenshot renders one frame$' "$WORK/stderr"
no_png
expect_exit 2 "$KSIM" viz "$WORK/base.jsonl" --frames 0
expect_grep "^ksim viz: --frames '0' is not a frame count: expected 1 to 1000000$" "$WORK/stderr"
expect_exit 2 "$KSIM" viz "$WORK/base.jsonl" --screenshot "$WORK/no-such-dir/out.png"
expect_grep 'no-such-dir' "$WORK/stderr"
no_png

# ---- Screenshots.
expect_exit 0 "$KSIM" viz "$WORK/base.jsonl" --screenshot "$WORK/trace.png" --at-ms 3000 --size 800x600
expect_grep "Screenshot: .*trace.png" "$WORK/stdout"
is_png "$WORK/trace.png" 800 600
expect_exit 0 "$KSIM" viz "$WORK/base.jsonl" "$WORK/acks1.jsonl" --screenshot "$WORK/compare.png" \
  --panel compare --size 640x400
is_png "$WORK/compare.png" 640 400
expect_exit 0 "$KSIM" viz "$SCENARIO" --screenshot "$WORK/scenario.png" --at-ms 2600 --size 1000x700
is_png "$WORK/scenario.png" 1000 700
# The same trace at another time draws another picture.
expect_exit 0 "$KSIM" viz "$WORK/base.jsonl" --screenshot "$WORK/early.png" --at-ms 0 --size 800x600
is_png "$WORK/early.png" 800 600
cmp -s "$WORK/early.png" "$WORK/trace.png" && fail "screenshots at 0 ms and 3000 ms are identical"

# No display: the window cannot open; the message points at --screenshot.
expect_exit 2 env -u DISPLAY -u WAYLAND_DISPLAY "$KSIM" viz "$WORK/base.jsonl"
expect_grep 'no display.*--screenshot' "$WORK/stderr"

# The window itself, on a virtual X display (Xvfb, Mesa's GLX): it opens, draws 30 frames of the
# viewer over two compared runs with the playhead placed, and closes by itself.
if command -v xvfb-run >/dev/null; then
  # Under ASan, LeakSanitizer is off for this one command: glfwTerminate unloads Mesa's GLX
  # driver, and the driver's own allocations then show up as leaks from an "<unknown module>"
  # that no suppression can name (the headless EGL path keeps its display open instead).
  expect_exit 0 env ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0" \
    xvfb-run -a -s "-screen 0 1280x800x24" "$KSIM" viz "$WORK/base.jsonl" \
    "$WORK/acks1.jsonl" --at-ms 1500 --size 1200x760 --frames 30
elif [ -n "${CI:-}" ]; then
  fail "xvfb-run is missing (scripts/bootstrap.sh installs xvfb): the window path is untested"
fi
# `ksim` itself loads no window system or OpenGL library: the viewer is ksim-viz, beside it, which
# `ksim viz` runs with its arguments as given (above). Without ksim-viz beside it, `ksim viz` says
# so and exits 2; every other subcommand works as before.
if command -v readelf >/dev/null; then
  readelf -d "$KSIM" >"$WORK/dynamic"
  expect_grep 'NEEDED.*libc\.so' "$WORK/dynamic"
  if grep -Ei 'NEEDED.*(glfw|EGL|OpenGL|GLX|X11|xcb|stb)' "$WORK/dynamic"; then
    fail "ksim links a viewer library (above): those belong to ksim-viz"
  fi
fi
mkdir "$WORK/alone"
cp "$KSIM" "$WORK/alone/ksim"
expect_exit 2 "$WORK/alone/ksim" viz "$SCENARIO" --screenshot "$WORK/alone.png"
expect_grep "^ksim viz: cannot start the viewer $WORK/alone/ksim-viz: No such file" "$WORK/stderr"
[ ! -e "$WORK/alone.png" ] || fail "a screenshot without the viewer"
expect_exit 0 "$WORK/alone/ksim" run "$SCENARIO" --report "$WORK/alone.json"
echo "ok"

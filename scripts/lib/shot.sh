# shellcheck shell=bash
# Renders a tmux frame (capture-pane -e output, ANSI colours) to a PNG the way the screenshot
# scripts do: aha to HTML, then headless chromium at the frame's size in DejaVu Sans Mono.
#
#   shot_png FRAME COLS ROWS TITLE OUT.png WORKDIR
#
# Needs aha and chromium (the caller installs them); CHROMIUM names the browser binary.

shot_png() {
  local frame=$1 cols=$2 rows=$3 title=$4 out=$5 work=$6
  local font_px=14 pad=12 chromium=${CHROMIUM:-chromium}
  local width=$(((cols * font_px * 1233 + 2047) / 2048 + 2 * pad + 8))
  local height=$(((rows * font_px * 12 + 9) / 10 + 2 * pad + 4))
  local base
  base=$(mktemp -p "$work" shot.XXXXXX)
  printf '%s\n' "$frame" >"$base.ans"
  aha --black --title "$title" <"$base.ans" >"$base.aha.html"
  perl -CSD -pe 's{([\x{2800}-\x{28FF}])}{<span class="cell">$1</span>}g;
      s{(style="(?:font-weight:bold;)?)color:dimgray;background-color:(?=[a-z])}{${1}color:black;background-color:}g' \
    "$base.aha.html" |
    sed 's|</head>|<style>\
html, body { background: #000; margin: 0; }\
body { padding: '"$pad"'px; }\
pre { font-family: '"'DejaVu Sans Mono'"', monospace; font-size: '"$font_px"'px; line-height: 1.2; margin: 0; }\
.cell { display: inline-block; width: 1ch; }\
</style>\
</head>|' >"$base.html"
  "$chromium" --headless --no-sandbox --disable-gpu --disable-quic --no-first-run \
    --disable-background-networking --disable-component-update --disable-sync \
    --user-data-dir="$(mktemp -d -p "$work")" --hide-scrollbars \
    --window-size="$width,$height" --screenshot="$base.png" \
    "file://$base.html" >"$base.chromium.log" 2>&1 || true
  if [ ! -s "$base.png" ]; then
    echo "shot_png: chromium wrote no png for $out:" >&2
    cat "$base.chromium.log" >&2
    return 1
  fi
  cp "$base.png" "$out"
}

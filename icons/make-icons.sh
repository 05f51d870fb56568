#!/usr/bin/env bash
# Makes the app icon's sizes with ImageMagick (Debian's `imagemagick`):
# 512x512.png drawn from the icon's shapes (icon.png is exactly this drawing
# at 256 px), the smaller ones scaled down from icon.png as 32x32.png and
# 128x128.png were. The desktop package installs each into the hicolor theme
# (scripts/package.sh). Run it again only when the icon changes.
set -euo pipefail
cd "$(dirname "$0")"
convert=/usr/bin/convert  # not a `convert` stand-in earlier on the PATH

# The icon at SIZE px: a rounded square, two links and three nodes, in
# coordinates of a 256 px icon scaled by SIZE/256.
draw() {
  local size=$1 out=$2
  s() { awk -v v="$1" -v k="$size" 'BEGIN { printf "%g", v * k / 256 }'; }
  "$convert" -size "${size}x${size}" xc:none \
    -fill '#1D2433' -draw "roundrectangle $(s 8),$(s 8) $(s 248),$(s 248) $(s 48),$(s 48)" \
    -stroke '#9AA3B5' -strokewidth "$(s 10)" \
    -draw "line $(s 76),$(s 128) $(s 184),$(s 64)" -draw "line $(s 76),$(s 128) $(s 184),$(s 192)" \
    -stroke none \
    -fill '#6D8CFF' -draw "circle $(s 76),$(s 128) $(s 116),$(s 128)" \
    -fill '#35C3A5' -draw "circle $(s 184),$(s 64) $(s 214),$(s 64)" \
    -fill '#F0A04B' -draw "circle $(s 184),$(s 192) $(s 214),$(s 192)" \
    -strip PNG32:"$out"
}

draw 512 512x512.png
for size in 16 24 48 64; do
  "$convert" icon.png -resize "${size}x${size}" -strip PNG32:"${size}x${size}.png"
done

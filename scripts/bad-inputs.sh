#!/usr/bin/env bash
# Runs the splatc tool on bad inputs a user may bring and prints a markdown table: the input, what
# splatc says, its exit code (docs/RELIABILITY.md keeps the table). A developer tool, not a test:
# the tests assert the same behaviour case by case (tests/test_cli.c, tests/test_io_*.c).
#
#   scripts/bad-inputs.sh [BUILD_DIR]     (default build; the tool must be built)
set -uo pipefail
cd "$(dirname "$0")/.."
bin=$(realpath "${1:-build}")/splatc
[ -x "$bin" ] || { echo "no $bin: build first (scripts/build.sh build)" >&2; exit 2; }
w=$(mktemp -d)
trap 'rm -rf "$w"' EXIT

# A valid scene to break: the demo (a COLMAP text model with PNG images), and a trained PLY.
"$bin" demo "$w/ok" --size 32 --views 8 -q || exit 1
"$bin" train "$w/ok" -o "$w/trained" --steps 20 -q || exit 1
ply=$w/trained/point_cloud.ply
cam="--camera 32,24,30,30,16,12,1,0,0,0,0,0,3"

fresh() { rm -rf "$w/s"; cp -r "$w/ok" "$w/s"; }
row() {
    local what=$1
    shift
    local rc
    (cd "$w" && timeout 300 "$@" >"$w/stdout" 2>"$w/stderr")
    rc=$?
    local out
    out=$(grep -m1 '^splatc' "$w/stderr" || grep -v '^$' "$w/stderr" | tail -1)
    out=${out//$w\//}
    out=${out//|/\\|}
    printf '| %s | %s | %s |\n' "$what" "${out:-(nothing)}" "$rc"
}

echo "| input | what splatc says | exit |"
echo "| --- | --- | --- |"
fresh; printf '1 PINHOLE 32 24 1e300 30 16 12\n' >"$w/s/sparse/0/cameras.txt"
row "COLMAP fx = 1e300 (finite as a double, not as a float)" "$bin" train s -o o --steps 5 -q
fresh; printf '1 PINHOLE 32 24 0.00001 30 16 12\n' >"$w/s/sparse/0/cameras.txt"
row "COLMAP focal length 1e-5 pixels" "$bin" train s -o o --steps 5 -q
fresh; printf '1 FOV 32 24 30 30 16 12 0.1\n' >"$w/s/sparse/0/cameras.txt"
row "COLMAP FOV camera (a model splatc does not undistort)" "$bin" train s -o o --steps 5 -q
fresh; mkdir "$w/s/masks"; cp "$w/s/images/view_000.png" "$w/s/masks/"
row "masks/ without a mask for every image" "$bin" train s -o o --steps 5 -q
fresh; printf '{"camera_model": "EQUIRECTANGULAR", "fl_x": 30, "frames": [{"file_path": "images/view_000.png", "transform_matrix": [[1,0,0,0],[0,1,0,0],[0,0,1,0],[0,0,0,1]]}]}' >"$w/s/transforms.json"; rm -r "$w/s/sparse"
row "transforms.json with an equirectangular camera" "$bin" train s -o o --steps 5 -q
fresh; sed -i 's/ view_003.png/ ..\/view_003.png/' "$w/s/sparse/0/images.txt"
row "COLMAP image name ../view_003.png" "$bin" train s -o o --steps 5 -q
fresh; rm "$w/s/images/view_005.png"
row "a missing image" "$bin" train s -o o --steps 5 -q
fresh; echo "not a picture" >"$w/s/images/view_005.png"
row "a text file named .png" "$bin" train s -o o --steps 5 -q
fresh; head -c 300 "$w/ok/images/view_002.png" >"$w/s/images/view_002.png"
row "a truncated PNG" "$bin" train s -o o --steps 5 -q
fresh
row "--images-factor 1000" "$bin" train s -o o --steps 5 --images-factor 1000 -q
fresh; sed -i 's/^1 PINHOLE 32 24/1 PINHOLE 24 32/' "$w/s/sparse/0/cameras.txt"
row "a 32x24 image for a 24x32 camera (rotated)" "$bin" train s -o o --steps 5 -q
fresh; rm "$w/s/sparse/0/points3D.txt"
row "COLMAP model without points3D" "$bin" train s -o o --steps 5 -q
row "a folder that is no dataset" "$bin" train "$w/trained" -o o --steps 5 -q
touch "$w/a-file"
row "-o naming a file" "$bin" train ok -o a-file --steps 5 -q
mkdir -p "$w/blocked/metrics.json"
row "a folder named metrics.json in -o" "$bin" train ok -o blocked --steps 5 -q
row "--steps -3" "$bin" train ok -o o --steps -3
row "--steps=abc" "$bin" train ok -o o --steps=abc
row "eval --scale 0" "$bin" eval "$ply" ok --eval --scale 0 -o o
row "eval --scale nan" "$bin" eval "$ply" ok --eval --scale nan -o o
row "--resume of a file that is no checkpoint" "$bin" train ok -o o --resume "$ply" -q
(cd "$w" && "$bin" train ok -o c1 --steps 10 --checkpoint-every 10 -q)
row "--resume past the end (checkpoint at 10, --steps 5)" "$bin" train ok -o o --steps 5 --resume c1/checkpoint.ckpt -q
"$bin" demo "$w/other" --size 32 --views 9 -q
row "--resume on another dataset" "$bin" train other -o o --steps 20 --resume c1/checkpoint.ckpt -q
cp "$w/c1/checkpoint.ckpt" "$w/flipped.ckpt"
printf '\x01' | dd of="$w/flipped.ckpt" bs=1 seek=200 conv=notrunc status=none
row "a checkpoint with one byte changed" "$bin" train ok -o o --steps 20 --resume flipped.ckpt -q
head -c 1000 "$ply" >"$w/cut.ply"
row "a PLY cut in its header" "$bin" render cut.ply $cam -o r -q
head -c $(($(stat -c %s "$ply") - 7)) "$ply" >"$w/short.ply"
row "a PLY cut in its data" "$bin" render short.ply $cam -o r -q
sed '0,/end_header/s/element vertex [0-9]*/element vertex 0/' "$ply" >"$w/empty.ply"
row "a PLY with no Gaussians (eval)" "$bin" eval empty.ply ok
row "a PLY with no Gaussians (render)" "$bin" render empty.ply $cam -o r -q
echo '[]' >"$w/none.json"
row "a cameras file holding []" "$bin" render "$ply" --cameras none.json -o r -q
printf '[{"name": "a", "width": 32, "height": 24,, }]' >"$w/syntax.json"
row "a cameras file with a JSON syntax error" "$bin" render "$ply" --cameras syntax.json -o r -q
row "--camera with NaN" "$bin" render "$ply" --camera 32,24,nan,30,16,12,1,0,0,0,0,0,3 -o r -q
row "--camera 1e10 pixels wide" "$bin" render "$ply" --camera 1e10,24,30,30,16,12,1,0,0,0,0,0,3 -o r -q
row "--background nan,0,0" "$bin" render "$ply" $cam --background nan,0,0 -o r -q
row "a 16384x16384 frame (more than one storage binding holds on most devices)" \
    "$bin" render "$ply" --camera 16384,16384,9000,9000,8192,8192,1,0,0,0,0,0,3 -o r -q
"$bin" demo "$w/big" --size 400 --views 2 -q
row "eval --scale 8 of 400x300 images (SSIM maps beyond one storage binding on most devices)" "$bin" eval "$w/big/ground_truth.ply" big --scale 8
row "an unknown command" "$bin" frobnicate

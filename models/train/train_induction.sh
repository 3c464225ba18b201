#!/bin/sh
# Makes the shipped assets/models/induction-tiny: `attnviz-cli train --task induction` with its
# defaults and seed 1 (the Training view's defaults too), its progress in train.log, and the
# SHA256SUMS of the files it writes. About 15 s on one thread. The same binary on the same
# machine writes the same files byte for byte; another CPU may differ in the last bits of the
# floats (Eigen's products take the paths its instructions allow), and 4000 steps carry them on.
#
# Usage (from the source tree, after `make`): sh models/train/train_induction.sh [build/attnviz-cli]
set -eu
cli=${1:-build/attnviz-cli}
out=assets/models/induction-tiny
mkdir -p "$out"
"$cli" train --task induction --seed 1 --steps 4000 -o "$out" 2> "$out/train.log"
cd "$out"
sha256sum config.json merges.txt model.safetensors train.json vocab.json > SHA256SUMS

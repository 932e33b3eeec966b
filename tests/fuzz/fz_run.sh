#!/bin/sh
# fz_run.sh FUZZER SEEDS WORKDIR SECONDS [MAX_LEN] - run a libFuzzer binary for a
# bounded time from the committed seed corpus (read-only: new inputs go to
# WORKDIR/corpus), with a seed printed for reproduction (FZ_SEED=N to
# choose it).  A crash leaves its input in WORKDIR/ as crash-* and fails
# the test: copy it into tests/corpus/<kind>/ so that the replay test keeps it.
set -eu
fuzzer=$1 seeds=$2 work=$3 secs=$4 maxlen=${5:-65536}
seed=${FZ_SEED:-$(od -An -N4 -tu4 /dev/urandom | tr -d ' ')}
mkdir -p "$work/corpus"
echo "fz_run: $fuzzer for ${secs}s, seed $seed (FZ_SEED=$seed to repeat)"
exec "$fuzzer" -seed="$seed" -max_total_time="$secs" -timeout=10 -rss_limit_mb=2048 \
  -max_len="$maxlen" -print_final_stats=1 -artifact_prefix="$work/" "$work/corpus" "$seeds"

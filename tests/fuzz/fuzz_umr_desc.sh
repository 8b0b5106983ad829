# Sourced by tools/run-fuzz.sh: a UMR pattern's description (src/hw/hw_umr.c,
# hw_umr_from_desc), as another process reads it from the key's record.
run fuzz_umr_desc tests/fuzz/fuzz_umr_desc.c "${lib[@]}"

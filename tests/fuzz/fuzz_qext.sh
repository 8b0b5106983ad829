# Sourced by tools/run-fuzz.sh: the backing of a queue in memory its creator
# gave (src/fabric/fab_qext.c), as another process reads it from the record.
run fuzz_qext tests/fuzz/fuzz_qext.c "${lib[@]}" src/fabric/fab_qext.c

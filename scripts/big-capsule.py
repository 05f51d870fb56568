#!/usr/bin/env python3
"""Writes a large generated capsule for measuring streamed imports.

Usage: scripts/big-capsule.py OUT.kip [MiB]   (default 1024 MiB)

One UPSERT of `Drug` blocks (two attributes each), each linked by
`interacts_with` to the block before it by {type, name}, and a trailing
WITH METADATA. It imports into a nexus holding the benchmark's schema
(`kip bench` writes it as 0-schema-00000.kip with KIP_BENCH_KEEP_CAPSULES=1).
"""
import sys

out = sys.argv[1]
target = int(sys.argv[2] if len(sys.argv) > 2 else 1024) << 20
with open(out, "w") as f:
    f.write("// generated capsule: new Drug concepts, each interacting with the one before\nUPSERT {\n")
    i = size = 0
    while size < target:
        link = (f' SET PROPOSITIONS {{ ("interacts_with", {{type: "Drug", name: "Streamed drug {i - 1}"}}) }}'
                if i else "")
        line = (f'  CONCEPT {{ {{type: "Drug", name: "Streamed drug {i}"}} SET ATTRIBUTES '
                f'{{ description: "generated streamed drug number {i}", score: {i % 1000} }}{link} }}\n')
        f.write(line)
        size += len(line)
        i += 1
    f.write('}\nWITH METADATA { source: "streaming test" }\n')
print(f"{out}: {i} blocks")

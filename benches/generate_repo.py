#!/usr/bin/env python3
"""Writes a synthetic repository of N small source files for scale benchmarks (the watcher's
save-to-searchable on a monorepo-sized tree): `benches/generate_repo.py DIR [N]`.

Files are spread over nested folders (100 per folder, 10 folders per parent, like a large
codebase's packages), each a short Rust or Markdown file with distinct identifiers, so the
index has real text to hold. Deterministic: the same N gives the same tree."""
import os
import sys


def main():
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    root = sys.argv[1]
    count = int(sys.argv[2]) if len(sys.argv) > 2 else 50_000
    for n in range(count):
        folder = os.path.join(root, f"pkg{n // 10_000:02}", f"mod{(n // 1_000) % 10}", f"part{(n // 100) % 10}")
        os.makedirs(folder, exist_ok=True)
        if n % 10 == 0:
            path = os.path.join(folder, f"notes_{n}.md")
            text = f"# Notes {n}\n\nHow component {n} handles retries and timeouts for request batch {n % 97}.\n"
        else:
            path = os.path.join(folder, f"item_{n}.rs")
            text = (
                f"/// Computes the checksum of block {n}.\n"
                f"pub fn checksum_{n}(data: &[u8]) -> u32 {{\n"
                f"    data.iter().fold({n % 251}u32, |acc, b| acc.wrapping_mul(31).wrapping_add(*b as u32))\n"
                f"}}\n\n"
                f"pub struct Record{n} {{\n    pub id: u64,\n    pub name: String,\n}}\n"
            )
        with open(path, "w") as f:
            f.write(text)
    with open(os.path.join(root, "README.md"), "w") as f:
        f.write(f"# Synthetic repo\n\n{count} generated files.\n")


if __name__ == "__main__":
    main()

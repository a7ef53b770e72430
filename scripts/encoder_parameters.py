"""Print every encoder's parameter count at a given width (Markdown table).

    python scripts/encoder_parameters.py [--hidden 200] [--input 50]

The papers' claims about equal parameter budgets (RCRN vs a 3-layer BiLSTM)
depend on the input width: compare at the width your embeddings have.
"""
from __future__ import annotations

import argparse

from rnnbench.compose import compose_config
from rnnbench.encoders.build import build_encoder, known_encoders


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--hidden", type=int, default=200)
    parser.add_argument("--input", type=int, default=50)
    args = parser.parse_args()
    print(f"| encoder | parameters (hidden {args.hidden}, input {args.input}) | output size | causal |")
    print("|---|---:|---:|---|")
    for name in known_encoders():
        cfg = compose_config([f"encoder={name}", f"encoder.hidden_size={args.hidden}"]).encoder
        enc = build_encoder(cfg, args.input)
        print(f"| `{name}` | {enc.num_parameters():,} | {enc.output_size} | {'yes' if enc.causal else 'no'} |")


if __name__ == "__main__":
    main()

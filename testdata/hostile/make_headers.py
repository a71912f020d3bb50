"""Makes zeros_compressed.npz: 8 members of 32 MiB of zeros each, deflated by
numpy.savez_compressed (256 MiB inflated from about 260 KB): a file whose
headers say everything `inspect` prints, and whose data a reader with the
default limits must refuse to inflate (over 100:1 and over 64 MiB).

Run with numpy installed: python3 make_headers.py (deterministic up to the
zip timestamps numpy writes)."""
import numpy as np

arrays = {f"w{i}": np.zeros((2048, 4096), dtype=np.float32) for i in range(8)}
np.savez_compressed("zeros_compressed.npz", **arrays)

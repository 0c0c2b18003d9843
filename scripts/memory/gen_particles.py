# Particle CSVs for the --max-memory figures (issue 29, item 5).
# Usage: gen_particles.py MODE N OUT (numpy; /usr/bin/python3) ; MODE: uniform (random in [0.1,0.5]^3) | blobs (Gaussian blobs, sd 2 cm,
# 20 of them in [0.1,0.9]^3) | cluster (random in a 3 cm cube)
import sys
import numpy as np
mode, n, out = sys.argv[1], int(sys.argv[2]), sys.argv[3]
rng = np.random.default_rng(29)
if mode == 'uniform':
    p = 0.1 + 0.4 * rng.random((n, 3))
elif mode == 'blobs':
    centres = 0.2 + 0.6 * rng.random((20, 3))
    p = centres[rng.integers(0, 20, n)] + rng.normal(0.0, 0.02, (n, 3))
    p = np.clip(p, 0.02, 0.98)
else:
    p = 0.45 + 0.03 * rng.random((n, 3))
np.savetxt(out, p, fmt='%.6f', delimiter=',', header='x,y,z', comments='')

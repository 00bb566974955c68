"""The judges: outside attacker, insiders, the publication verdict and the insider repair."""

"""LP kernels: the attacker graph, components, cut separation, clean-up and path moves."""

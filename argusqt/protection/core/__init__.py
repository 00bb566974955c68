"""What every method shares: the problem, results, typed parameters, the registry, budgets."""

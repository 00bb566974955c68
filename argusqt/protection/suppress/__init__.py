"""Secondary suppression methods: OPT, MOD, HEUR (and its polish), GH, NET, linked tables."""

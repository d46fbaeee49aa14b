"""Reinforcement learning on speeltafel's games (the ``rl`` extra: pettingzoo, gymnasium,
numpy). :mod:`speeltafel.rl.pettingzoo_env` is a PettingZoo AEC environment for every
game; nothing outside this package imports it."""

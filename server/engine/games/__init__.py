"""One rules module per game; each exports GAME."""

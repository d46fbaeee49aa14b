"""Match runtime: one writer per match, versions, idempotency, clocks, subscriptions."""

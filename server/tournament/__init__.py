"""The tournament director: lobby, formats, clock policy, duplicate sets, results."""

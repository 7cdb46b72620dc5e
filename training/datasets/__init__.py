"""From stored episodes to training windows: the query, goals, partners."""

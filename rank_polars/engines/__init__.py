"""The engines that compute metric specs: Polars (long-form plans and ranked lists) and SQL."""

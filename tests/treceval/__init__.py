"""Helpers of the trec_eval tests: the vendored trec_eval 10 built here, and generated TREC files."""

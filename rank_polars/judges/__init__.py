"""Judgments from several judges (people, LLMs, clicks): one judge's labels, their agreement,
what they do to the leaderboard, what to judge next, and the bounds unjudged items leave open.

* :mod:`.table`: judgments with a ``judge`` column read from every format; one judge's labels;
* :mod:`.calls`, :mod:`.sql`: ``evaluate`` / ``to_sql`` with ``judge=``, ``by_judge=`` and ``bounds=``;
* :mod:`.agreement`: ``rp.agreement`` (Cohen's, Fleiss' kappa, Krippendorff's alpha, bootstrap intervals);
* :mod:`.leaderboard`: ``rp.leaderboard_agreement`` (Kendall's tau, tau_ap, RBO, flipped pairs, shifts);
* :mod:`.pool`: ``rp.pool`` (TREC depth-k pools, the judging queue).
"""

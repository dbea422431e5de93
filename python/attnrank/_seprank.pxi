# Included by _core.pyx: separation rank of the simplified self-attention
# network by grid tensors (the Python face of ``attnrank seprank``).

from attnrank._capi cimport (
    ar_seprank_config, ar_seprank_opts, ar_seprank_opts_init, ar_seprank_option_table,
    ar_seprank_config_of, ar_seprank_result, ar_seprank_run, ar_seprank_result_free,
    ar_seprank_result_json,
)

from attnrank._results_theory import Seprank


cdef object _th_partition_text(object partition, str fn):
    """The CLI's "0,1/2,3" text of a partition given as that text or as a
    pair (A, B) of position sequences (None stays None)."""
    if partition is None or isinstance(partition, str):
        return partition
    else:
        try:
            side_a, side_b = partition
            text = (",".join(str(operator.index(i)) for i in side_a) + "/" +
                    ",".join(str(operator.index(i)) for i in side_b))
        except (TypeError, ValueError):
            raise ArgumentError(AR_EINVAL, strerror(AR_EINVAL), fn,
                                "partition must be a text 'A/B' such as '0,1/2,3' or a pair "
                                f"(A, B) of position sequences, got {partition!r}")
    return text


# ---- seprank ---------------------------------------------------------------------

def seprank(layers, d, *, heads=1, n=2, partition=None, templates=None, max_dim=1024,
            residual=False, position=0, entry=None, exact=False, primes=None, rational=False,
            no_float=False, seed=0, rtol=None, atol=0.0, threads=1, max_memory=None,
            embed_rank=None, vocab=None, positions=False):
    """Grid-tensor rank of f(X) = r^T y^L_position: a LOWER bound on the
    separation rank of the simplified self-attention network w.r.t. a
    partition (A, B) of the positions, as ``attnrank seprank --json``
    (ar_seprank_run; docs/theory/depth-width.md).  An optional keyword left
    None takes the library's default, as the CLI without the flag.

    {options}

    ``partition`` may also be a pair of position sequences, ``([0, 1], [2,
    3])``.  Each exact rank is a certificate; a rank that fills the grid is
    reported ``saturated`` (only a lower bound).  ``max_memory`` caps the
    upper estimate of what FLINT would allocate, checked before FLINT is
    called: a larger estimate, or one a trial allocation cannot provide,
    raises OutOfMemoryError naming the grid and the estimate, instead of
    FLINT aborting the interpreter.

    CLI options without a keyword: ``--csv FILE`` writes the float singular
    values as CSV; use ``.singular_values`` of the record (divided by its
    first value for the CLI's sigma_normalised) instead.  ``--json`` prints
    the result as JSON; use ``.to_dict()`` instead.

    Returns a :class:`attnrank.Seprank`; ``.to_dict()`` equals the CLI's
    JSON.  Raises ArgumentError (ValueError) for a bad size, partition,
    position, entry or tolerance, OutOfMemoryError when the grid exceeds
    2^26 entries.  The GIL is released during the computation.
    """
    cdef str fn = "ar_seprank_run"
    cdef ar_seprank_opts o
    ar_seprank_opts_init(&o)
    # The names and kinds are the library's table, the switches and the
    # partition text its ar_seprank_config_of, the rules ar_seprank_run's.
    cdef list keep = []
    _set_options(ar_seprank_option_table(), &o, dict(
        layers=layers, d=d, heads=heads, n=n, partition=_th_partition_text(partition, fn),
        templates=templates, max_dim=max_dim, residual=residual, position=position,
        entry=entry, exact=exact, primes=primes, max_memory=max_memory, rational=rational,
        no_float=no_float, seed=seed, rtol=rtol, atol=atol, threads=threads,
        embed_rank=embed_rank, vocab=vocab, positions=positions), fn, keep)
    cdef ar_seprank_config cfg
    cdef ar_error err
    err.msg[0] = 0
    check_status(ar_seprank_config_of(&o, &cfg, &err), fn, &err)
    cdef ar_seprank_result res
    cdef int rc
    with nogil:
        rc = ar_seprank_run(&cfg, &res, &err)
    check_status(rc, fn, &err)
    cdef char *json_text = NULL
    try:
        rc = ar_seprank_result_json(&res, AR_JSON_NONFINITE, &json_text, &err)
        return _record_of_json(Seprank, rc, json_text, &err, "ar_seprank_result_json")
    finally:
        ar_seprank_result_free(&res)


seprank.__doc__ = _documented(seprank.__doc__, ar_seprank_option_table())

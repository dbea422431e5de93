# Included by _core.pyx: separation rank of the simplified self-attention
# network by grid tensors (the Python face of ``attnrank seprank``).

from attnrank._capi cimport (
    ar_partition_parse, AR_SEPRANK_READOUT_ENTRY,
    AR_SEPRANK_RATIONAL_AUTO, AR_SEPRANK_RATIONAL_ON,
    ar_seprank_config, ar_seprank_config_init, ar_seprank_result, ar_seprank_run,
    ar_seprank_result_free, ar_seprank_result_json,
)

from attnrank._results_theory import Seprank


cdef bytes _th_partition_text(object partition, str fn):
    """The CLI's "0,1/2,3" text of a partition given as that text or as a
    pair (A, B) of position sequences."""
    if isinstance(partition, str):
        text = partition
    else:
        try:
            side_a, side_b = partition
            text = (",".join(str(operator.index(i)) for i in side_a) + "/" +
                    ",".join(str(operator.index(i)) for i in side_b))
        except (TypeError, ValueError):
            raise ArgumentError(AR_EINVAL, strerror(AR_EINVAL), fn,
                                "partition must be a text 'A/B' such as '0,1/2,3' or a pair "
                                f"(A, B) of position sequences, got {partition!r}")
    data = text.encode("utf-8", "replace")
    return b"?" if b"\0" in data else data


# ---- seprank ---------------------------------------------------------------------

def seprank(layers, d, *, heads=1, n=2, partition=None, templates=None, max_dim=1024,
            residual=False, position=0, entry=None, exact=False, primes=None, rational=False,
            no_float=False, seed=0, rtol=None, atol=0.0, threads=1, max_memory=None,
            embed_rank=None, vocab=None, positions=False):
    """Grid-tensor rank of f(X) = r^T y^L_position for the simplified
    self-attention network, a LOWER bound on its separation rank w.r.t. a
    partition (A, B) of the positions; as ``attnrank seprank --json``
    (ar_seprank_run; docs/theory/depth-width.md).

    The network has no softmax, LayerNorm or ReLU; heads of size d/H; an
    optional residual.  M templates per position give an M^|A| x M^|B|
    matrix (the matricised grid tensor).  Default M: the least with
    min(M^|A|, M^|B|) > bound, capped so that rows and columns stay <=
    ``max_dim`` (default 1024).  The float rank uses the singular values
    (threshold reported); ``exact=True`` adds the rank over F_p with weights
    and templates uniform over the field (1 prime up to 64 x 64, else 2
    independent primes; each rank is a certificate) and over Q
    (fmpz_mat_rank) up to 64 x 64, L <= 3.  Bounds are natural logs
    (bound_log; proved upper bounds on the separation rank).  Reported as
    ``saturated`` when the rank fills the matrix (then it is only a lower
    bound: raise ``templates``).  ``embed_rank=R``: inputs x_i = E z_i with E
    of size d x r (seeded; uniform over F_p with ``exact=True``): bounds with
    m = min(d, r) (proved); ``vocab=V``: the templates are the first M of V
    tokens (default all V: the grid is then the function itself and its
    rank the exact separation rank, exact_function_rank); ``positions=True``
    adds generic absolute positions.  The closed form at two positions is
    labelled verified or conjectured (docs/theory/embedding-rank.md).

    layers
        depth L (>= 1, at most 64).
    d
        width d_x (>= 1).
    heads
        heads per layer H, dividing d (default 1).
    n
        number of positions N (2..32, default 2).
    partition
        positions of A and B: a text such as ``"0,1/2,3"`` or a pair of
        position sequences ``([0, 1], [2, 3])``; every position 0..n-1
        exactly once, both sides non-empty (default: first half / second
        half).
    templates
        templates per position M (>= 1; default None: auto).
    max_dim
        size budget of the auto template count: rows, cols <= max_dim
        (default 1024).
    residual
        True: add the residual connection.
    position
        read-out position (default 0).
    entry
        read out output entry ``entry`` (0..d-1; default None: a seeded
        random linear read-out).
    exact
        True: also the exact rank (mod p, and over Q if small).
    primes
        number of primes for ``exact`` (1..3; default None: auto).
    rational
        True: force the rank over Q (fmpz_mat_rank; slow on large grids).
    no_float
        True: skip the floating-point spectrum (needs ``exact=True``).
    seed
        base seed, an integer in [0, 2^64) (default 0); the same seed gives
        the same network and templates as the CLI's ``--seed``.
    rtol
        relative rank tolerance (>= 0; default None: max(m, n) eps).
    atol
        absolute rank tolerance (>= 0, default 0).
    threads
        threads for the grid evaluation (>= 1, default 1).
    max_memory
        bytes one exact rank (mod p or over Q) may ask FLINT for, by an
        upper estimate made before FLINT is called (default None: 16e9, as
        the CLI; 0: no cap).  A larger estimate, or one a trial allocation
        cannot provide, raises OutOfMemoryError naming the grid and the
        estimate, instead of FLINT aborting the interpreter.
    embed_rank
        token embeddings of rank R (>= 1; default None: templates free in
        R^d): inputs E z with E of size d x R.
    vocab
        a vocabulary of V tokens E z_1..E z_V (>= 1; needs ``embed_rank``;
        default None).
    positions
        True: add generic absolute positions (needs ``embed_rank``).

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
    cdef ar_seprank_config cfg
    cdef ar_error err
    err.msg[0] = 0
    ar_seprank_config_init(&cfg)
    # The rules are ar_seprank_run's; here only the conversions.
    cfg.layers = _th_count(layers, "layers", fn, 0)
    cfg.d = _th_count(d, "d", fn, 0)
    cfg.heads = _th_count(heads, "heads", fn, 0)
    cfg.n = _th_count(n, "n", fn, 0)
    cfg.position = _th_count(position, "position", fn, 0)
    if entry is not None:
        cfg.readout = AR_SEPRANK_READOUT_ENTRY
        cfg.entry = _th_count(entry, "entry", fn, 0)
    cfg.templates = 0 if templates is None else _th_count(templates, "templates", fn, 1)
    cfg.max_dim = _th_count(max_dim, "max_dim", fn, 1)
    cfg.residual = _th_flag(residual, "residual", fn)
    cfg.do_exact = _th_flag(exact, "exact", fn)
    cfg.do_float = not _th_flag(no_float, "no_float", fn)
    cfg.nprimes = 0 if primes is None else _th_count(primes, "primes", fn, 1)
    cfg.rational = AR_SEPRANK_RATIONAL_ON if _th_flag(rational, "rational", fn) \
        else AR_SEPRANK_RATIONAL_AUTO
    cfg.seed = _th_seed(seed, fn)
    cfg.rtol = -1.0 if rtol is None else _option_nonneg(rtol, "rtol", fn)
    cfg.atol = _th_finite(atol, "atol", fn)
    cfg.threads = _th_count(threads, "threads", fn, 1)
    if max_memory is not None:
        cfg.max_bytes = _th_finite(max_memory, "max_memory", fn)
    if embed_rank is not None:
        cfg.embedding.enabled = 1
        cfg.embedding.rank = _th_count(embed_rank, "embed_rank", fn, 0)
    if vocab is not None:
        cfg.embedding.vocab = _th_count(vocab, "vocab", fn, 1)
    cfg.embedding.positions = _th_flag(positions, "positions", fn)
    cdef bytes text
    if partition is not None:
        text = _th_partition_text(partition, fn)
        check_status(ar_partition_parse(text, cfg.n, &cfg.partition, &err),
                     "ar_partition_parse", &err, f"partition {partition!r} at n = {cfg.n}")
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

# Time of the values-only and thin SVD against n, log-log, with the n^3
# reference slope.  Called by bench/run_bench.py:
#   gnuplot -e "datafile='...csv'; outdir='docs/figures'; ref_n=4096; ref_t=12.3" bench/perf_svd.gp
# Columns: n, values_ar_t2, values_lp_t2 (wall, 2 BLAS threads), values_ar_t1,
# np_t1, full_ar_t1 (CPU time, 1 BLAS thread), full_ar_t2 (wall); NaN = not run.
set datafile separator ','
set datafile missing 'NaN'
set logscale xy
set xlabel 'n (matrix is n x n)'
set ylabel 'time (s), median of interleaved runs'
set key bottom right box opaque
set grid
set format y '10^{%L}'
set xtics (256, 512, 1024, 2048, 4096)
set xrange [200:5200]
ref(x) = ref_t * (x / ref_n) ** 3
do for [fmt in 'png svg'] {
  if (fmt eq 'png') {
    set terminal pngcairo size 900,620 enhanced font 'Sans,11'
  } else {
    set terminal svg size 900,620 enhanced font 'Sans,11'
  }
  set output sprintf('%s/perf_svd_time.%s', outdir, fmt)
  set title 'attnrank singular spectra vs LAPACKE and numpy (OpenBLAS)'
  plot datafile using 1:2 with linespoints lw 2 pt 7 title 'attnrank values, 2 threads (wall)', \
       datafile using 1:3 with linespoints lw 1 pt 6 dt 2 title 'LAPACKE dgesdd values, 2 threads (wall)', \
       datafile using 1:4 with linespoints lw 2 pt 5 title 'attnrank values, 1 thread (CPU)', \
       datafile using 1:5 with linespoints lw 1 pt 4 dt 3 title 'numpy svd(compute\_uv=False), 1 thread (CPU)', \
       datafile using 1:6 with linespoints lw 2 pt 9 title 'attnrank thin SVD, 1 thread (CPU)', \
       datafile using 1:7 with points pt 11 ps 1.5 title 'attnrank thin SVD, 2 threads (wall)', \
       ref(x) with lines lc rgb 'gray' dt 4 title 'n^3 reference'
  unset output
}

# Embedding-rank bottleneck: exact two-position separation rank (log scale)
# against the width d at a fixed embedding rank r (left), and against r at a
# fixed width (right), for L = 1 and 2; the plain network (templates free in
# R^d) for comparison.  The closed form C(min(d, r) + K, min(d, r)) is flat
# beyond d = r.
#   build/experiments/embedding_rank --full --out out/embedding_rank --figures docs/figures
# renders this itself; by hand:
#   gnuplot -e "datadir='out/embedding_rank'; outdir='docs/figures'; rfix=3; dfix=8" experiments/plots/embedding_rank.gp
if (!exists("datadir")) datadir = 'out/embedding_rank'
if (!exists("outdir")) outdir = 'docs/figures'
if (!exists("rfix")) rfix = 3
if (!exists("dfix")) dfix = 8
data = datadir . '/embedding_rank.csv'
set datafile separator ','
set key autotitle columnhead
set logscale y
set grid
set key left top opaque box
sel(sweep, l, v) = (strcol(1) eq sweep && $2 == l) ? v : NaN
set terminal pngcairo size 1200,500 enhanced font 'sans,11'
set output outdir . '/embedding_rank.png'
set multiplot layout 1,2
set xlabel 'width d'
set ylabel 'exact separation rank (N = 2)'
set title sprintf('against width, embedding rank r = %d', rfix)
plot \
  data using 3:(sel('plain', 1, $8)) with linespoints lw 2 pt 6 dt 2 title 'L = 1, no embedding', \
  data using 3:(sel('width', 1, $8)) with linespoints lw 2 pt 7 title sprintf('L = 1, r = %d', rfix), \
  data using 3:(sel('plain', 2, $8)) with linespoints lw 2 pt 4 dt 2 title 'L = 2, no embedding', \
  data using 3:(sel('width', 2, $8)) with linespoints lw 2 pt 5 title sprintf('L = 2, r = %d', rfix)
set xlabel 'embedding rank r'
set title sprintf('against embedding rank, width d = %d', dfix)
plot \
  data using 4:(sel('rank', 1, $8)) with linespoints lw 2 pt 7 title 'L = 1', \
  data using 4:(sel('rank', 2, $8)) with linespoints lw 2 pt 5 title 'L = 2', \
  data using 4:(sel('rank', 1, $9)) with lines dt 3 lc rgb 'black' title 'C(min(d,r) + K, min(d,r))', \
  data using 4:(sel('rank', 2, $9)) with lines dt 3 lc rgb 'black' notitle
unset multiplot
set terminal svg size 1200,500 enhanced font 'sans,11'
set output outdir . '/embedding_rank.svg'
set multiplot layout 1,2
set xlabel 'width d'
set title sprintf('against width, embedding rank r = %d', rfix)
plot \
  data using 3:(sel('plain', 1, $8)) with linespoints lw 2 pt 6 dt 2 title 'L = 1, no embedding', \
  data using 3:(sel('width', 1, $8)) with linespoints lw 2 pt 7 title sprintf('L = 1, r = %d', rfix), \
  data using 3:(sel('plain', 2, $8)) with linespoints lw 2 pt 4 dt 2 title 'L = 2, no embedding', \
  data using 3:(sel('width', 2, $8)) with linespoints lw 2 pt 5 title sprintf('L = 2, r = %d', rfix)
set xlabel 'embedding rank r'
set title sprintf('against embedding rank, width d = %d', dfix)
plot \
  data using 4:(sel('rank', 1, $8)) with linespoints lw 2 pt 7 title 'L = 1', \
  data using 4:(sel('rank', 2, $8)) with linespoints lw 2 pt 5 title 'L = 2', \
  data using 4:(sel('rank', 1, $9)) with lines dt 3 lc rgb 'black' title 'C(min(d,r) + K, min(d,r))', \
  data using 4:(sel('rank', 2, $9)) with lines dt 3 lc rgb 'black' notitle
unset multiplot

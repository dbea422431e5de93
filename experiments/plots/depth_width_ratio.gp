# Ratio of the measured exact separation rank to the bounds (N = 2, one head,
# no residual), per width against depth: to the parity bound (solid; 1 means
# attained), to the split bound of docs/theory/depth-width.md (dashed) and to the monomial
# bound (dotted).
#   gnuplot -e "datadir='out/depth_width'; outdir='docs/figures'" experiments/plots/depth_width_ratio.gp
if (!exists("datadir")) datadir = 'out/depth_width'
if (!exists("outdir")) outdir = 'docs/figures'
data = datadir . '/depth_width_rank_plot.csv'
set datafile separator ','
set datafile missing 'NaN'
stats data using 1 nooutput
nb = STATS_blocks
widths = ''
do for [i=0:nb-1] { stats data index i using 1 nooutput; widths = widths . sprintf(' %d', STATS_min) }
width(i) = int(word(widths, i + 1))
# Widths drawn (all measured ones are in the data); override with -e "show='...'".
if (!exists("show")) show = ' 2 3 4 6 8 12 15 '
shown(i) = strstrt(show, sprintf(' %d ', width(i))) > 0
only(i, v) = shown(i) ? v : NaN
ttl(i) = shown(i) ? sprintf('d = %d', width(i)) : ''
set logscale y
set format y '10^{%L}'
set xrange [0.8:4.2]
set yrange [1e-3:2]
set xlabel 'depth L'
set ylabel 'measured rank / bound'
set grid
set key outside right top font ',9'
set title 'measured exact rank / bound: parity (solid), split (dashed), monomial (dotted)' font ',10'
set terminal pngcairo size 1000,650 enhanced font 'sans,11'
set output outdir . '/depth_width_ratio.png'
plot \
  for [i=0:nb-1] data index i using 2:(only(i, exp($3-$7))) with linespoints pt 7 lc i+1 title ttl(i), \
  for [i=0:nb-1] data index i using 2:(only(i, exp($3-$6))) with linespoints dt 2 pt 6 lc i+1 notitle, \
  for [i=0:nb-1] data index i using 2:(only(i, exp($3-$5))) with linespoints dt 3 pt 4 lc i+1 notitle
set terminal svg size 1000,650 enhanced font 'sans,11'
set output outdir . '/depth_width_ratio.svg'
replot
set output

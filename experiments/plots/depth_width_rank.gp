# Separation rank of the simplified self-attention network against depth
# (N = 2 positions, one head, no residual): ln of the exact grid rank
# (points: exact, mean over seeds; open points: floating point), the parity
# bound (= the closed form C(d + (3^L-1)/2, d) for N = 2), the split and
# monomial bounds, and the theory's threshold L_th = log_3(d) per width.
#   build/experiments/depth_width_transition --full --out out/depth_width
# renders this itself; by hand:
#   gnuplot -e "datadir='out/depth_width'; outdir='docs/figures'" experiments/plots/depth_width_rank.gp
if (!exists("datadir")) datadir = 'out/depth_width'
if (!exists("outdir")) outdir = 'docs/figures'
data = datadir . '/depth_width_rank_plot.csv'
set datafile separator ','
set datafile missing 'NaN'
stats data using 1 nooutput
nb = STATS_blocks
# Width of each block (for the legend).
widths = ''
do for [i=0:nb-1] { stats data index i using 1 nooutput; widths = widths . sprintf(' %d', STATS_min) }
width(i) = int(word(widths, i + 1))
# Widths drawn (all measured ones are in the data); override with -e "show='...'".
if (!exists("show")) show = ' 2 3 4 6 8 12 15 '
shown(i) = strstrt(show, sprintf(' %d ', width(i))) > 0
only(i, v) = shown(i) ? v : NaN
ttl(i) = shown(i) ? sprintf('d = %d', width(i)) : ''
set logscale y
set xrange [0.5:6.2]
set yrange [0.5:200]
set xlabel 'depth L'
set ylabel 'ln(separation rank)  (log scale)'
set grid
set key outside right top font ',9'
set title "ln rank vs depth, N = 2, one head: exact (filled), float (open), closed form = parity bound (solid), split bound (dotted);\nvertical dashes: L_{th} = log_3 d" font ',10'
set terminal pngcairo size 1000,650 enhanced font 'sans,11'
set output outdir . '/depth_width_rank.png'
plot \
  for [i=0:nb-1] data index i using 2:(only(i, $3)) with points pt 7 ps 1.2 lc i+1 title ttl(i), \
  for [i=0:nb-1] data index i using 2:(only(i, $4)) with points pt 6 ps 1.0 lc i+1 notitle, \
  for [i=0:nb-1] data index i using 2:(only(i, $8)) with lines lw 1.5 lc i+1 notitle, \
  for [i=0:nb-1] data index i using 2:(only(i, $6)) with lines dt 3 lc i+1 notitle, \
  for [i=0:nb-1] data index i every ::0::0 using (only(i, $9)):(0.5):(0):(200) with vectors nohead dt 2 lc i+1 notitle
set terminal svg size 1000,650 enhanced font 'sans,11'
set output outdir . '/depth_width_rank.svg'
replot
set output

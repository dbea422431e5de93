# Optimal width against parameter count from the fitted transition law
# ln d = 5.039 + 0.0555 L with N = 12 L d^2 (Levine et al. 2020), with
# GPT-3 as built (L = 96, d = 12288), the optimum at its size and the 1T optimum.
#   gnuplot -e "datadir='out/depth_width'; outdir='docs/figures'" experiments/plots/depth_width_allocation.gp
if (!exists("datadir")) datadir = 'out/depth_width'
if (!exists("outdir")) outdir = 'docs/figures'
curve = datadir . '/depth_width_allocation.csv'
points = datadir . '/depth_width_allocation_points.csv'
set datafile separator ','
set logscale xy
set xlabel 'parameters N = 12 L d^2'
set ylabel 'width d_x'
set grid
set key top left
set title 'optimal width for a parameter budget (on the transition line)'
set terminal pngcairo size 900,600 enhanced font 'sans,11'
set output outdir . '/depth_width_allocation.png'
plot curve skip 1 using 1:3 with lines lw 2 title 'optimal d_x', \
     points skip 1 using 2:4 with points pt 7 ps 1.5 lc rgb 'red' notitle, \
     points skip 1 every ::0::0 using 2:4:1 with labels offset char 1,-1 left font ',9' notitle, \
     points skip 1 every ::1::1 using 2:4:1 with labels offset char -1,1 right font ',9' notitle, \
     points skip 1 every ::2::2 using 2:4:1 with labels offset char 1,-1 left font ',9' notitle
set terminal svg size 900,600 enhanced font 'sans,11'
set output outdir . '/depth_width_allocation.svg'
replot
set output

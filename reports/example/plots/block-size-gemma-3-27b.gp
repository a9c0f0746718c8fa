# block-size-gemma-3-27b.gp: Block size: gemma-3-27b on h100-sxm, engine vllm, tp 1, KV bf16, pool 18.19 GiB; workload chat (100,000 requests simulated, max_len 8192)
# Written by kvplan; edit it and re-render with `gnuplot block-size-gemma-3-27b.gp` in this
# directory.  Data: block-size-gemma-3-27b.dat, one block per panel (index N), base units.
set terminal pngcairo noenhanced size 1700,620 font "sans,11"
set output "block-size-gemma-3-27b.png"
set encoding utf8
set grid
set multiplot layout 1,2 title "Block size: gemma-3-27b on h100-sxm, engine vllm, tp 1, KV bf16, pool 18.19 GiB\nworkload chat (100,000 requests simulated, max_len 8192)" font ",12"

# panel 0
unset logscale
unset y2tics
unset y2label
unset arrow
unset label
set autoscale
set format y "% h"
set xtics autofreq norotate
set ytics mirror
set size noratio
set offsets 0, 0, 0, 0
set xlabel offset 0,0
set key below Left reverse height 1
set title "(a) what the pool loses to blocks"
set xlabel "block size P (tokens per block)"
set ylabel "internal waste (% of the KV pool)"
set y2label "metadata: block tables + allocator (MiB)"
set ytics nomirror
set y2tics
set logscale x 2
set xtics ("1" 1, "8" 8, "16" 16, "32" 32, "64" 64, "128" 128, "256" 256)
set xrange [0.8695652174:294.4]
set yrange [0:*]
set y2range [0:*]
plot "block-size-gemma-3-27b.dat" index 0 using 1:($4/0.01) with linespoints lw 2 pt 5 ps 0.8 lc 1 dt 1 title "internal waste, paged", \
     "block-size-gemma-3-27b.dat" index 0 using 1:($5/1048576) with linespoints lw 2 pt 7 ps 0.8 lc 4 dt 2 axes x1y2 title "metadata, paged (right axis)"

# panel 1
unset logscale
unset y2tics
unset y2label
unset arrow
unset label
set autoscale
set format y "% h"
set xtics autofreq norotate
set ytics mirror
set size noratio
set offsets 0, 0, 0, 0
set xlabel offset 0,0
set key below Left reverse height 1
set title "(b) what the pool holds"
set xlabel "block size P (tokens per block)"
set ylabel "live sequences (time average)"
set logscale x 2
set xtics ("1" 1, "8" 8, "16" 16, "32" 32, "64" 64, "128" 128, "256" 256)
set xrange [0.8695652174:294.4]
set arrow from 16, graph 0 to 16, graph 1 nohead dt 3 lw 1.5 lc rgb "gray30"
set yrange [0:*]
set y2range [0:*]
plot "block-size-gemma-3-27b.dat" index 1 using 1:($4/1) with linespoints lw 2 pt 5 ps 0.8 lc 1 dt 1 title "live sequences, paged", \
     NaN with lines dt 3 lw 1.5 lc rgb "gray30" title "recommended: P = 16"
unset multiplot

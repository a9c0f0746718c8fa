# budget-gemma-3-27b.gp: Memory budget of one GPU: gemma-3-27b, engine vllm, KV bf16 (auto), block 16; max sequences of 8k tokens above each bar
# Written by kvplan; edit it and re-render with 'gnuplot budget-gemma-3-27b.gp' in this
# directory.  Data: budget-gemma-3-27b.dat, one block per panel (index N), base units.
set terminal pngcairo noenhanced size 1000,620 font "sans,11"
set output 'budget-gemma-3-27b.png'
set encoding utf8
set grid
set linetype 1 lc rgb "#9400d3"
set linetype 2 lc rgb "#008560"
set linetype 3 lc rgb "#0072b2"
set linetype 4 lc rgb "#c85000"
set linetype 5 lc rgb "#8c564b"
set linetype 6 lc rgb "#e7298a"
set linetype 7 lc rgb "#c41a0e"
set linetype 8 lc rgb "#000000"

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
set title 'Memory budget of one GPU: gemma-3-27b, engine vllm, KV bf16 (auto), block 16'."\n".'max sequences of 8k tokens above each bar'
set xlabel 'GPU and tensor-parallel size (memory of one GPU)'
set ylabel 'memory per GPU (GiB)'
set style fill solid 0.85 border lc rgb "gray30"
set boxwidth 0.6
set xrange [-0.6:7.6]
set yrange [0:*]
set offsets 0, 0, graph 0.08, 0
set xtics nomirror
set grid noxtics ytics
set xlabel offset 0,-1
plot 'budget-gemma-3-27b.dat' index 0 using 0:(($4+$5+$6+$7+$8)/1073741824):xtic(2) with boxes lc rgb "#f1ead0" dt 1 title 'free (headroom)', \
     'budget-gemma-3-27b.dat' index 0 using 0:(($4+$5+$6+$7)/1073741824) with boxes lc rgb "#59a14f" dt 1 title 'KV pool', \
     'budget-gemma-3-27b.dat' index 0 using 0:(($4+$5+$6)/1073741824) with boxes lc rgb "#9c9c9c" dt 1 title 'overhead (CUDA context, NCCL, graphs)', \
     'budget-gemma-3-27b.dat' index 0 using 0:(($4+$5)/1073741824) with boxes lc rgb "#f28e2b" dt 1 title 'activation peak', \
     'budget-gemma-3-27b.dat' index 0 using 0:(($4)/1073741824) with boxes lc rgb "#4e79a7" dt 1 title 'weights', \
     'budget-gemma-3-27b.dat' index 0 using 0:($9/1073741824) with boxes fs empty lc rgb "black" lw 2 title 'GPU memory', \
     'budget-gemma-3-27b.dat' index 0 using 0:(t = $4+$5+$6+$7+$8, (t > $9 ? t : $9))/1073741824:3 with labels offset 0,0.8 font ",10" notitle

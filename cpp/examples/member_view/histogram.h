// The C++ class whose member the member_view examples expose: a fixed-bin histogram over [lo, hi).
#pragma once

#include <cstddef>
#include <vector>

class Histogram {
public:
    Histogram(size_t bins, double lo, double hi) : counts(bins, 0.f), lo_(lo), hi_(hi) { }
    void add(double x) {
        if (x < lo_ || x >= hi_ || counts.empty()) return;
        counts[(size_t) ((x - lo_) / (hi_ - lo_) * (double) counts.size())] += 1.f;
    }
    double total() const {
        double s = 0;
        for (float c : counts) s += c;
        return s;
    }
    std::vector<float> counts;  ///< One count per bin; exposed to Python as a view, not a copy.

private:
    double lo_, hi_;
};

package io.netapprox.examples.flink;

/** One synthetic taxi trip with its pickup time (event time, epoch ms). A Flink POJO. */
public class TaxiRide {
    public long pickupMillis;
    public int zone;
    public double distance;
    public double fare;

    /** Columns the query does not read (the benchmark's record width); null when not set. */
    public String payload;

    public TaxiRide() {}

    public TaxiRide(long pickupMillis, int zone, double distance, double fare) {
        this.pickupMillis = pickupMillis;
        this.zone = zone;
        this.distance = distance;
        this.fare = fare;
    }

    public int getZone() {
        return zone;
    }

    public double getFare() {
        return fare;
    }
}

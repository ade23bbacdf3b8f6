package io.netapprox.examples.taxi;

/**
 * One NYC-taxi-shaped trip: pickup hour (0-23), pickup zone (1-263, the TLC taxi zones), distance
 * in miles and fare in dollars.
 */
public record TaxiTrip(int hour, int zone, double distance, double fare) {}

import type { Metadata } from "next";
import { NotBuiltYet } from "../../../components/layout/not-built-yet";

export const metadata: Metadata = { title: "Events" };

export default function EventsPage() {
  return <NotBuiltYet href="/events" />;
}

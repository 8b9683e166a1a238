import type { Metadata } from "next";
import { NotBuiltYet } from "../../../components/layout/not-built-yet";

export const metadata: Metadata = { title: "Snapshots" };

export default function SnapshotsPage() {
  return <NotBuiltYet href="/snapshots" />;
}

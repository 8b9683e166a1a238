import type { Metadata } from "next";
import { NotBuiltYet } from "../../../components/layout/not-built-yet";

export const metadata: Metadata = { title: "Volumes" };

export default function VolumesPage() {
  return <NotBuiltYet href="/volumes" />;
}
